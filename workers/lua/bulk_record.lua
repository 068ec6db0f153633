-- Record the provider batch a submission made (by the coordinator that made it, or by
-- one that found it after that one died) and close the submission, in one step: its
-- requests become `submitted` to the batch and the batch is opened for polling. Not
-- fenced: the batch exists, and recording it is what keeps it from being paid again.
-- KEYS[1] the submission's hash, KEYS[2] the open submissions zset, KEYS[3] the batch's
-- hash, KEYS[4] the open batches zset, KEYS[5..4+n] the requests' hashes, KEYS[5+n..]
-- the vetq batches' sets of provider batches.
-- ARGV[1] submission id, ARGV[2] batch id, ARGV[3] the batch's fields (JSON object),
-- ARGV[4] its first poll (ms), ARGV[5] live TTL (s), ARGV[6] n.
-- Returns "recorded"; "known" when the batch was recorded already (two coordinators
-- adopted it); "late" when the submission had been released meanwhile (its requests,
-- no longer claimed by it, are left as they are: the batch is polled, nothing applied).
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 'known'
end
local open = redis.call('EXISTS', KEYS[1]) == 1
local n = tonumber(ARGV[6])
for i = 5, 4 + n do
  local fields = redis.call('HMGET', KEYS[i], 'state', 'submission')
  if fields[1] == 'submitting' and fields[2] == ARGV[1] then
    redis.call('HSET', KEYS[i], 'state', 'submitted', 'batch', ARGV[2])
  end
end
local batch = cjson.decode(ARGV[3])
for name, value in pairs(batch) do
  redis.call('HSET', KEYS[3], name, tostring(value))
end
redis.call('HSET', KEYS[3], 'submission', ARGV[1])
redis.call('EXPIRE', KEYS[3], ARGV[5])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[2])
for i = 5 + n, #KEYS do
  redis.call('SADD', KEYS[i], ARGV[2])
  redis.call('EXPIRE', KEYS[i], ARGV[5])
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if open then
  return 'recorded'
end
return 'late'
