-- Take the next message off the first non-empty queue key AND record it as unacked,
-- in one step, so no moment exists in which a message is in neither place.
-- (kombu's BRPOP pops first and records afterwards, from the client: a worker killed,
-- or a Redis restarted, between the two loses the message.)
-- KEYS[1] unacked hash, KEYS[2] unacked index (zset), KEYS[3..n] queue keys in order.
-- ARGV[1] now (the client's clock, as kombu's own unacked index uses).
-- Returns {queue key, message} or nil when every queue is empty. A message that is
-- not a kombu envelope is returned unrecorded: kombu refuses it as it would today.
for i = 3, #KEYS do
  local message = redis.call('RPOP', KEYS[i])
  if message then
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
    return {KEYS[i], message}
  end
end
return nil
