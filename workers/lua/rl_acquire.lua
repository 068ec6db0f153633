-- Fleet-wide sliding-window admission for one provider:model (atomic).
-- KEYS[1] window zset (member = entry id, score = ms), KEYS[2] hash entry id -> tokens,
-- KEYS[3] cooldown key (its PTTL is the time left), KEYS[4] the window's running sum
-- (hash; include/rl_window.lua says what it holds and why it stays right), KEYS[5] and
-- KEYS[6] the calls and tenants waiting (include/rl_fair.lua).
-- ARGV[1] rpm (0 = none), ARGV[2] tpm (0 = none), ARGV[3] estimated tokens,
-- ARGV[4] window length in ms, ARGV[5] entry id (`<tenant>:<id>` for a tenant's call),
-- ARGV[6] the tenant's weight (1 when absent), ARGV[7] the longest wait the caller
-- sleeps in place (ms; a refusal up to it registers the call as waiting; 0 or absent:
-- never), ARGV[8] how long past its wait a waiting call stays registered (ms).
-- Returns 0 when admitted (entry recorded), else the wait in whole ms (>= 1).
--
-- Fair share: when other tenants have calls waiting, a tenant over its share of the
-- limit (limit x its weight / the weights of the waiting tenants and its own) is
-- admitted only into what is left once the waiting tenants under their share have
-- what they wait for (their calls, up to their share); a tenant under its share, or
-- alone, is admitted as before. So capacity no waiting call can use is never held back.
-- A fleet without tenants (no tenant entry in the window, nobody registered) takes
-- none of this: one EXISTS more than before.
-- Cost: O(log n) for n entries in the window, plus the expired entries it trims (each
-- trimmed once), plus O(t) for t tenants waiting; a refusal for tokens also reads the
-- oldest entries that must leave before the call fits, and no others. The whole window
-- is read only when the running sum cannot be trusted (rl_window).
-- include: rl_window
-- include: rl_fair
local rpm = tonumber(ARGV[1])
local tpm = tonumber(ARGV[2])
local est = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local entry = ARGV[5]
local weight = tonumber(ARGV[6]) or 1
local hold = tonumber(ARGV[7]) or 0
local grace = tonumber(ARGV[8]) or 0
if weight <= 0 then
  weight = 1
end

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

-- What the waiting tenants under their share are owed (requests, tokens), when this
-- call's tenant is over its own share.
local tenant = rl_tenant_of(entry)
local member = entry .. '|' .. est
local fair = tenant ~= '' or st.tn > 0 or redis.call('EXISTS', KEYS[6]) == 1
local owed_n, owed_k = 0, 0
if fair then
  local waiting = fair_waiting(KEYS[5], KEYS[6], now)
  local weights = weight
  for other, p in pairs(waiting) do
    if other ~= tenant then
      weights = weights + p.w
    end
  end
  if weights > weight then
    local mine = rl_tenant(st, tenant)
    local over = (rpm > 0 and mine.n + 1 > rpm * weight / weights)
      or (tpm > 0 and mine.k + est > tpm * weight / weights)
    if over then
      for other, p in pairs(waiting) do
        if other ~= tenant then
          local use = rl_tenant(st, other)
          if rpm > 0 then
            owed_n = owed_n + math.min(p.n, math.max(0, math.floor(rpm * p.w / weights - use.n)))
          end
          if tpm > 0 then
            owed_k = owed_k + math.min(p.k, math.max(0, tpm * p.w / weights - use.k))
          end
        end
      end
    end
  end
end

local wait = 0
local count = redis.call('ZCARD', KEYS[1])
if rpm > 0 and count + owed_n >= rpm then
  local at = count + owed_n - rpm
  if at < count then
    -- the (at + 1)-th oldest entry must leave the window first
    local oldest = redis.call('ZRANGE', KEYS[1], at, at, 'WITHSCORES')
    wait = math.max(wait, tonumber(oldest[2]) + window - now)
  else
    -- what is owed fills the limit alone: ask again once the waiting calls have asked
    wait = math.max(wait, math.min(window, fair_next_ask(KEYS[5], now, grace)))
  end
end
if tpm > 0 then
  if est > tpm then
    wait = math.max(wait, window)
  elseif owed_k + est > tpm then
    wait = math.max(wait, math.min(window, fair_next_ask(KEYS[5], now, grace)))
  else
    local fits_in = rl_tokens_wait(st, st.sum + owed_k, est, tpm, window)
    if fits_in == nil then
      rl_recount(st)
      fits_in = rl_tokens_wait(st, st.sum + owed_k, est, tpm, window) or 0
    end
    wait = math.max(wait, fits_in)
  end
end

if wait > 0 then
  wait = math.max(1, math.ceil(wait))
  if fair and hold > 0 and wait <= hold and (tpm <= 0 or est <= tpm) then
    fair_register(KEYS[5], KEYS[6], member, tenant, est, weight, now + wait + grace)
  end
  rl_save(st)
  return wait
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
rl_tenant_add(st, tenant, added, est - before)
if fair then
  fair_leave(KEYS[5], KEYS[6], member)
end
rl_written(st)
rl_save(st)
return 0
