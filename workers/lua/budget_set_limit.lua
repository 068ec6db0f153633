-- Set a scope's token limit once (a re-delivered job does not reset it).
-- KEYS[1] scope hash; ARGV[1] limit, ARGV[2] ttl seconds. Returns 1 when newly set.
if redis.call('HSETNX', KEYS[1], 'limit', ARGV[1]) == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
  return 1
end
if redis.call('TTL', KEYS[1]) == -1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return 0
