// A server-sent-events parser for fetch bodies. push() takes decoded text as it arrives and
// returns the complete events in it at once; a partial line waits for the rest. Only what
// an OpenAI stream uses is kept: data lines (joined by "\n"), comments and other fields are
// skipped. Lines end with "\n" or "\r\n".
export class SseParser {
  constructor() {
    this.buffer = '';
    this.data = [];
  }

  push(text) {
    this.buffer += text;
    const events = [];
    let start = 0;
    for (let nl = this.buffer.indexOf('\n', start); nl >= 0; nl = this.buffer.indexOf('\n', start)) {
      let line = this.buffer.slice(start, nl);
      start = nl + 1;
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (this.data.length) events.push(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) {
        this.data.push(line.slice(line[5] === ' ' ? 6 : 5));
      }
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }
}
