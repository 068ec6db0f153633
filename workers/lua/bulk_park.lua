-- Park a job on a bulk-lane request: create the request (pending) unless it exists,
-- or join it while it is unanswered; either way the job is recorded as its waiter in
-- the same step, so an answer that lands meanwhile always finds it.
-- KEYS[1] request hash, KEYS[2] its waiters set, KEYS[3] the model's pending zset,
-- KEYS[4] the models set, KEYS[5] the job's hash.
-- ARGV[1] job id, ARGV[2] digest, ARGV[3] now (ms), ARGV[4] live TTL (s),
-- ARGV[5] request fields (JSON object, "" to join only), ARGV[6] deadline (epoch s,
-- "" for none), ARGV[7] realtime fallback ("1"/"0"), ARGV[8] job fields (JSON object).
-- Returns "created", "joined", or "resolved" (answered or failed meanwhile: run again).
local state = redis.call('HGET', KEYS[1], 'state')
local created = false
if not state then
  if ARGV[5] == '' then
    return 'resolved'
  end
  local fields = cjson.decode(ARGV[5])
  for name, value in pairs(fields) do
    redis.call('HSET', KEYS[1], name, tostring(value))
  end
  redis.call('HSET', KEYS[1], 'state', 'pending', 'owner', ARGV[1], 'queued_ms', ARGV[3],
    'errors', 0, 'resubmits', 0, 'deadline', ARGV[6], 'fallback', ARGV[7])
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
  redis.call('SADD', KEYS[4], fields['model_key'])
  created = true
elseif state ~= 'pending' and state ~= 'submitting' and state ~= 'submitted' then
  return 'resolved'
else
  -- Shared by several jobs: the earliest deadline, and a fallback if any allows it.
  local deadline = redis.call('HGET', KEYS[1], 'deadline')
  if ARGV[6] ~= '' and (not deadline or deadline == '' or tonumber(ARGV[6]) < tonumber(deadline)) then
    redis.call('HSET', KEYS[1], 'deadline', ARGV[6])
  end
  if ARGV[7] == '1' then
    redis.call('HSET', KEYS[1], 'fallback', '1')
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[4])
local job = cjson.decode(ARGV[8])
for name, value in pairs(job) do
  redis.call('HSET', KEYS[5], name, tostring(value))
end
redis.call('HSET', KEYS[5], 'digest', ARGV[2], 'parked_ms', ARGV[3])
redis.call('EXPIRE', KEYS[5], ARGV[4])
if created then
  return 'created'
end
return 'joined'
