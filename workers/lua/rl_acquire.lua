-- Fleet-wide sliding-window admission for one provider:model (atomic).
-- KEYS[1] window zset (member = entry id, score = ms), KEYS[2] hash entry id -> tokens,
-- KEYS[3] cooldown key (its PTTL is the time left), KEYS[4] the window's running sum
-- (hash; include/rl_window.lua says what it holds and why it stays right).
-- ARGV[1] rpm (0 = none), ARGV[2] tpm (0 = none), ARGV[3] estimated tokens,
-- ARGV[4] window length in ms, ARGV[5] entry id.
-- Returns 0 when admitted (entry recorded), else the wait in whole ms (>= 1).
-- Cost: O(log n) for n entries in the window, plus the expired entries it trims (each
-- trimmed once); a refusal for tokens also reads the oldest entries that must leave
-- before the call fits, and no others. The whole window is read only when the running
-- sum cannot be trusted (rl_window).
-- include: rl_window
local rpm = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local est = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local entry = ARGV[5]

local cooldown = redis.call('PTTL', KEYS[3])
if cooldown > 0 then
  return cooldown
end
if rpm <= 0 and tpm <= 0 then
  return 0
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local st = rl_window(KEYS[1], KEYS[2], KEYS[4], now, window + 1000)
rl_trim(st, now - window)

local wait = 0
local count = redis.call('ZCARD', KEYS[1])
if rpm > 0 and count >= rpm then
  -- the (count - rpm + 1)-th oldest entry must leave the window first
  local oldest = redis.call('ZRANGE', KEYS[1], count - rpm, count - rpm, 'WITHSCORES')
  wait = math.max(wait, tonumber(oldest[2]) + window - now)
end
if tpm > 0 then
  if est > tpm then
    wait = math.max(wait, window)
  else
    local fits_in = rl_tokens_wait(st, st.sum, est, tpm, window)
    if fits_in == nil then
      rl_recount(st)
      fits_in = rl_tokens_wait(st, st.sum, est, tpm, window) or 0
    end
    wait = math.max(wait, fits_in)
  end
end

if wait > 0 then
  rl_save(st)
  return math.max(1, math.ceil(wait))
end

local added = redis.call('ZADD', KEYS[1], now, entry)
local before = 0
if added == 0 then
  -- the id is still in the window: its tokens are replaced
  before = tonumber(redis.call('HGET', KEYS[2], entry)) or 0
end
redis.call('HSET', KEYS[2], entry, est)
st.n = st.n + added
st.sum = st.sum + est - before
rl_written(st)
rl_save(st)
return 0
