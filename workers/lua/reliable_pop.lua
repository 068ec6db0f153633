-- Take the next message off the queues AND record it as unacked, in one step, so no
-- moment exists in which a message is in neither place.
-- (kombu's BRPOP pops first and records afterwards, from the client: a worker killed,
-- or a Redis restarted, between the two loses the message.)
-- KEYS[1] unacked hash, KEYS[2] unacked index (zset), then four keys per queue, the
--   queues in the order to try them: the queue's turn (a string), its high, normal
--   and low lists.
-- ARGV[1] now (the client's clock, as kombu's own unacked index uses).
-- ARGV[2] the schedule: one digit per turn, 1 high, 2 normal, 3 low (core.queue's
--   PRIORITY_SCHEDULE, "1211213121": 6 high, 3 normal, 1 low in every 10).
-- While two or more of a queue's levels have work, its turn names the level it serves
-- next, and an empty level gives its turn to the highest one with work; the turn
-- moves on with each job taken that way, and it lives in Redis: the share holds for the
-- whole fleet, not for each worker alone. A queue with one level waiting (nearly
-- always the normal list) is popped without reading or moving the turn, so a normal
-- job costs one EXISTS more than before priorities, and an empty queue one EXISTS in
-- place of a pop per list.
-- Returns {list key, message} or nil when every list is empty. A message that is not
-- a kombu envelope is returned unrecorded: kombu refuses it as it would today.
local schedule = ARGV[2]
local period = #schedule
for base = 3, #KEYS, 4 do
  local waiting = redis.call('EXISTS', KEYS[base + 1], KEYS[base + 2], KEYS[base + 3])
  local key, message, turn = nil, nil, nil
  if waiting == 1 then
    for _, level in ipairs({2, 1, 3}) do
      key = KEYS[base + level]
      message = redis.call('RPOP', key)
      if message then break end
    end
  elseif waiting > 1 then
    turn = (tonumber(redis.call('GET', KEYS[base])) or 0) % period
    local first = tonumber(string.sub(schedule, turn + 1, turn + 1))
    key = KEYS[base + first]
    message = redis.call('RPOP', key)
    local level = 1
    while not message and level <= 3 do
      if level ~= first then
        key = KEYS[base + level]
        message = redis.call('RPOP', key)
      end
      level = level + 1
    end
  end
  if message then
    if turn then
      redis.call('SET', KEYS[base], (turn + 1) % period)
    end
    local ok, payload = pcall(cjson.decode, message)
    local properties = ok and type(payload) == 'table' and payload['properties']
    local tag = type(properties) == 'table' and properties['delivery_tag']
    local info = type(properties) == 'table' and properties['delivery_info']
    if type(tag) == 'string' and type(info) == 'table' then
      -- The stored entry is kombu's own format, [message, exchange, routing_key];
      -- the message is spliced in as sent, never re-encoded.
      local entry = '[' .. message .. ',' .. cjson.encode(info['exchange'] or '') .. ','
        .. cjson.encode(info['routing_key'] or '') .. ']'
      redis.call('HSET', KEYS[1], tag, entry)
      redis.call('ZADD', KEYS[2], ARGV[1], tag)
    end
    return {key, message}
  end
end
return nil
