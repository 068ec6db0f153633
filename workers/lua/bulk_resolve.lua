-- Resolve a bulk-lane request for good (done, failed, or realtime: answer it on the
-- realtime lane) and hand every job parked on it to the wake list, in one step.
-- KEYS[1] request hash, KEYS[2] its waiters set, KEYS[3] the wake list.
-- ARGV[1] state, ARGV[2] resolved TTL (s), ARGV[3] fields (JSON object: the answer,
-- the error), ARGV[4] "realtime" when a job past its deadline answered the request on
-- the realtime lane (it may then be missing, or sent there, but never in a batch).
-- Returns the number of jobs woken, or -1 when the request was already resolved
-- (nothing changes: an answer is applied once).
local state = redis.call('HGET', KEYS[1], 'state')
if ARGV[4] == 'realtime' then
  if state and state ~= 'realtime' then
    return -1
  end
elseif state ~= 'pending' and state ~= 'submitting' and state ~= 'submitted' then
  return -1
end
redis.call('HSET', KEYS[1], 'state', ARGV[1])
local fields = cjson.decode(ARGV[3])
for name, value in pairs(fields) do
  redis.call('HSET', KEYS[1], name, tostring(value))
end
-- The request itself is no longer needed: only a resubmission would send it again.
redis.call('HDEL', KEYS[1], 'request')
redis.call('EXPIRE', KEYS[1], ARGV[2])
local jobs = redis.call('SMEMBERS', KEYS[2])
for _, job in ipairs(jobs) do
  redis.call('RPUSH', KEYS[3], job)
end
redis.call('DEL', KEYS[2])
return #jobs
