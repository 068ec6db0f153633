-- Give a submission's requests back to their model's pending set and close it: its
-- create was refused or never sent, or no provider batch carrying it exists past the
-- latest moment one could have been created. Only requests still claimed by this
-- submission move, so a release can never undo a record.
-- KEYS[1] the submission's hash, KEYS[2] the open submissions zset, KEYS[3] the model's
-- pending zset, KEYS[4] the models set, KEYS[5..] the requests' hashes.
-- ARGV[1] submission id, ARGV[2] now (ms), ARGV[3] model key, ARGV[4..] the digests, in
-- the order of KEYS[5..].
-- Returns how many requests went back to pending.
local released = 0
for i = 5, #KEYS do
  local fields = redis.call('HMGET', KEYS[i], 'state', 'submission', 'queued_ms')
  if fields[1] == 'submitting' and fields[2] == ARGV[1] then
    redis.call('HSET', KEYS[i], 'state', 'pending', 'submission', '')
    -- Their first queued time: they are the oldest waiting, and go in the next batch.
    redis.call('ZADD', KEYS[3], fields[3] or ARGV[2], ARGV[i - 1])
    released = released + 1
  end
end
if released > 0 then
  redis.call('SADD', KEYS[4], ARGV[3])
end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return released
