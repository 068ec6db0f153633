-- Settle (charge the real usage) or release a reservation, exactly once.
-- KEYS[1] reservation hash, KEYS[2..n] its scope hashes; ARGV[1] 'settle' or 'release',
-- ARGV[2] actual tokens (settle only). Returns 1 when this call finished it, 0 otherwise.
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'reserved' then
  return 0
end
local tokens = tonumber(redis.call('HGET', KEYS[1], 'tokens')) or 0
local settle = ARGV[1] == 'settle'
local actual = math.max(0, tonumber(ARGV[2]) or 0)
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    if redis.call('HINCRBY', KEYS[i], 'reserved', -tokens) < 0 then
      redis.call('HSET', KEYS[i], 'reserved', 0)
    end
    if settle and actual > 0 then
      redis.call('HINCRBY', KEYS[i], 'spent', actual)
    end
  end
end
if settle then
  redis.call('HSET', KEYS[1], 'state', 'settled', 'actual', actual)
else
  redis.call('HSET', KEYS[1], 'state', 'released', 'actual', 0)
end
return 1
