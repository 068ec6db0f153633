-- Claim pending bulk-lane requests for one submission to a provider, fenced by the
-- coordinator's lease: a coordinator that lost its lease (stalled past it) claims
-- nothing, so a request is never in two submissions. The submission is recorded
-- before the provider is called, so a coordinator that dies before recording the batch
-- it made leaves behind what a successor needs to find and adopt it.
-- KEYS[1] the coordinator lock, KEYS[2] the open submissions zset, KEYS[3] the
-- submission's hash, KEYS[4] the model's pending zset, KEYS[5..] the requests' hashes.
-- ARGV[1] the caller's fencing token (the lock's value while it holds it),
-- ARGV[2] submission id, ARGV[3] when to check on it (ms), ARGV[4] its fields (JSON
-- object), ARGV[5] live TTL (s), ARGV[6..] the digests, in the order of KEYS[5..].
-- Returns the digests claimed (those still pending), or false when the caller no
-- longer holds the lock.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return false
end
local claimed = {}
for i = 5, #KEYS do
  if redis.call('HGET', KEYS[i], 'state') == 'pending' then
    redis.call('HSET', KEYS[i], 'state', 'submitting', 'submission', ARGV[2])
    redis.call('ZREM', KEYS[4], ARGV[i + 1])
    claimed[#claimed + 1] = ARGV[i + 1]
  end
end
if #claimed > 0 then
  local fields = cjson.decode(ARGV[4])
  for name, value in pairs(fields) do
    redis.call('HSET', KEYS[3], name, tostring(value))
  end
  redis.call('HSET', KEYS[3], 'requests', cjson.encode(claimed))
  redis.call('EXPIRE', KEYS[3], ARGV[5])
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
end
return claimed
