// A misbehaving OpenAI-style server for `duet bench serve`'s error tests. The model name in
// the request picks the behaviour: ok, http500, malformed, hang (headers, then silence), cut
// (one token, then the connection closes), slow_headers (no answer at all), json (answers
// without streaming), empty503 / empty_sse (a status, no body). Prints "listening PORT" once ready.
import http from 'node:http';

const chunk = (delta, extra = {}) =>
  `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;

const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ object: 'list', data: [{ id: 'ok', object: 'model' }] }));
    }
    let model = '';
    try { model = JSON.parse(body).model; } catch { /* bad body: answered below */ }
    const sse = () => res.writeHead(200, { 'content-type': 'text/event-stream' });
    switch (model) {
      case 'ok':
        sse();
        res.write(chunk({ role: 'assistant', content: '' }));
        res.write(chunk({ content: 'a' }));
        res.write(chunk({ content: 'b' }));
        res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } })}\n\n`);
        return res.end('data: [DONE]\n\n');
      case 'http500':
        res.writeHead(500, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: 'the fake server fails on purpose', type: 'server_error', code: 500 } }));
      case 'malformed':
        sse();
        res.write(chunk({ content: 'a' }));
        return res.end('data: {"choices": [ this is not json\n\n');
      case 'hang':
        sse();
        res.write(chunk({ content: 'a' }));
        return;  // never ends; the client's --timeout must
      case 'cut':
        sse();
        res.write(chunk({ content: 'a' }));
        return setTimeout(() => res.socket.destroy(), 20);
      case 'slow_headers':
        return;  // no status line at all
      case 'empty503':
        res.writeHead(503, { 'content-length': '0' });
        return res.end();
      case 'empty_sse':
        res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': '0' });
        return res.end();
      case 'json':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ choices: [{ message: { content: 'ab' } }] }));
      default:
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ error: { message: `no model ${model}` } }));
    }
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
