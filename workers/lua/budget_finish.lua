-- Settle (charge the real usage) or release a reservation, exactly once.
-- KEYS[1] reservation hash, KEYS[2..n+1] its scope hashes, KEYS[n+2..2n+1] their lease
-- sorted sets; ARGV[1] 'settle' or 'release', ARGV[2] actual tokens (settle only),
-- ARGV[3] reservation id. Returns 1 when this call finished it, 0 otherwise.
-- A scope whose reserve already swept this reservation's expired lease gave its tokens
-- back then: it is not given them back again (its r:<id> field is gone), but a late
-- settle still charges what the provider counted, once.
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'reserved' then
  return 0
end
local settle = ARGV[1] == 'settle'
local actual = math.max(0, tonumber(ARGV[2]) or 0)
local id = ARGV[3]
local n = (#KEYS - 1) / 2
for i = 2, n + 1 do
  local scope = KEYS[i]
  local held = tonumber(redis.call('HGET', scope, 'r:' .. id))
  if held then
    redis.call('HDEL', scope, 'r:' .. id)
    if redis.call('HINCRBY', scope, 'reserved', -held) < 0 then
      redis.call('HSET', scope, 'reserved', 0)
    end
  end
  redis.call('ZREM', KEYS[i + n], id)
  if settle and actual > 0 and redis.call('EXISTS', scope) == 1 then
    redis.call('HINCRBY', scope, 'spent', actual)
  end
end
if settle then
  redis.call('HSET', KEYS[1], 'state', 'settled', 'actual', actual)
else
  redis.call('HSET', KEYS[1], 'state', 'released', 'actual', 0)
end
return 1
