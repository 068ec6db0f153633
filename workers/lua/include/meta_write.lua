-- Write a job's meta (ARGV[1]) at its key (KEYS[1]), kept ARGV[2] seconds (0: for ever,
-- as Celery's backend does with no result_expires).
local ttl = tonumber(ARGV[2])
if ttl and ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
else
  redis.call('SET', KEYS[1], ARGV[1])
end
