-- Charge tokens straight to spent on every scope (no reservation).
-- KEYS[1..n] scope hashes; ARGV[1] tokens, ARGV[2] ttl s for a scope hash that has none.
local tokens = math.max(0, tonumber(ARGV[1]) or 0)
for i = 1, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'spent', tokens)
  if redis.call('TTL', KEYS[i]) == -1 then
    redis.call('EXPIRE', KEYS[i], ARGV[2])
  end
end
return 1
