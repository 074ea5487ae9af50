// Streamed text reaches the DOM at most once per animation frame: chunks only mark work as
// pending, and one requestAnimationFrame callback applies everything that arrived since the
// last frame. No timers: a chunk is shown in the very next frame after it arrives.
//
// Every frame that shows new tokens is also timed, for the browser test and for anyone
// curious (window.__duetTimings), in performance.now() milliseconds: `first` when the
// oldest chunk of the frame left the body reader, `frame` the frame's start (the
// requestAnimationFrame timestamp), `start` when the callback began, `dom` when this
// frame's DOM update was done (the browser paints it right after, in the same frame),
// `paint` when the first task after that frame's rendering ran, `tokens` how many chunks
// the frame carried.
const MAX_TIMINGS = 20000;
window.__duetTimings = window.__duetTimings || [];

// A task that runs after the current frame is rendered (a message posted from inside a
// requestAnimationFrame callback is handled after that frame's style, layout and paint).
const afterPaint = (() => {
  const channel = new MessageChannel();
  const queue = [];
  channel.port1.onmessage = () => queue.shift()();
  return (fn) => {
    queue.push(fn);
    channel.port2.postMessage(null);
  };
})();

export class FrameBatcher {
  // apply() writes whatever is pending into the DOM.
  constructor(apply) {
    this.apply = apply;
    this.scheduled = false;
    this.first = 0;
    this.count = 0;
    this.onFlushed = null;
    this.flush = this.flush.bind(this);
  }

  // A chunk arrived at `arrival` (performance.now()) and its text is pending.
  push(arrival) {
    if (this.count === 0) this.first = arrival;
    this.count++;
    this.schedule();
  }

  schedule() {
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(this.flush);
  }

  flush(frame) {
    this.scheduled = false;
    if (this.count > 0) {
      const record = { first: this.first, frame, start: performance.now(), tokens: this.count, dom: 0, paint: 0 };
      this.count = 0;
      this.apply();
      record.dom = performance.now();
      afterPaint(() => {
        record.paint = performance.now();
        const t = window.__duetTimings;
        t.push(record);
        if (t.length > MAX_TIMINGS) t.splice(0, t.length - MAX_TIMINGS);
      });
    }
    const done = this.onFlushed;
    this.onFlushed = null;
    if (done) done();
  }

  // Runs fn in the next frame, after what is pending has been applied (the stream ended:
  // its last DOM work goes in a frame like every other).
  close(fn) {
    this.onFlushed = fn;
    this.schedule();
  }
}
