// voxanon live page: microphone -> AudioWorklet -> WebSocket (float32 PCM) -> anonymized audio played back.
// window.voxanonLive holds the session's state (read by the page and by the end-to-end test).
const CHUNK_MS = 20;  // at least this much audio per frame sent (whole 128-sample worklet blocks)
const PLAYBACK_LEAD_S = 0.02;  // output is scheduled this far ahead of the audio clock

const live = window.voxanonLive = {
  status: "idle", error: null, ready: null, done: null,
  sent: 0, received: 0, delays: [], keep: false, input: [], output: [],
  start, stop, latency,
};
let ctx, micStream, node, ws, pending = [], pendingLength = 0, arrivals = [], playHead = 0;

function show(id, text) { document.getElementById(id).textContent = text; }
function setStatus(text) { live.status = text; show("status", text); }

function percentile(values, q) {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q / 100 * sorted.length))];
}

// end-to-end delay per reply: arrival of the reply minus the capture time of its first sample (ms)
function latency() {
  return {p50: percentile(live.delays, 50), p95: percentile(live.delays, 95), max: Math.max(...live.delays)};
}

function fail(message) {
  live.error = message;
  show("error", message);
  setStatus("stopped");
  teardown();
}

function sendPending() {
  const chunk = new Float32Array(pendingLength);
  let offset = 0;
  for (const block of pending) { chunk.set(block, offset); offset += block.length; }
  pending = []; pendingLength = 0;
  ws.send(chunk.buffer);
  if (live.keep) live.input.push(chunk);
  live.sent += chunk.length;
}

function onCapture(event) {
  if (!ws || ws.readyState !== WebSocket.OPEN || !live.ready) return;
  const block = event.data;
  arrivals.push([live.sent + pendingLength + block.length, performance.now()]);
  pending.push(block); pendingLength += block.length;
  if (pendingLength >= ctx.sampleRate * CHUNK_MS / 1000) sendPending();
}

function captureTime(sample) {
  while (arrivals.length > 1 && arrivals[0][0] <= sample) arrivals.shift();
  return arrivals.length ? arrivals[0][1] : performance.now();
}

function play(samples) {
  const buffer = ctx.createBuffer(1, samples.length, ctx.sampleRate);
  buffer.copyToChannel(samples, 0);
  const source = ctx.createBufferSource();
  source.buffer = buffer;
  source.connect(ctx.destination);
  playHead = Math.max(playHead, ctx.currentTime + PLAYBACK_LEAD_S);
  source.start(playHead);
  playHead += buffer.duration;
}

function onReply(event) {
  if (typeof event.data === "string") {
    const message = JSON.parse(event.data);
    if (message.type === "ready") {
      live.ready = message;
      show("method", message.method);
      const chunkMs = Math.ceil(ctx.sampleRate * CHUNK_MS / 1000 / 128) * 128 / ctx.sampleRate * 1000;
      show("algorithmic", `${message.latency_ms.toFixed(1)} ms, plus ${chunkMs.toFixed(0)} ms chunks`);
      setStatus("live");
    } else if (message.type === "done") {
      live.done = message;
      setStatus("done");
      ws.close();
    } else if (message.type === "error") {
      fail(`server: ${message.message}`);
    }
    return;
  }
  const samples = new Float32Array(event.data);
  if (!samples.length) return;
  live.delays.push(performance.now() - captureTime(live.received));
  live.received += samples.length;
  if (live.keep) live.output.push(samples);
  play(samples);
  const {p50, p95} = latency();
  show("latency", `p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`);
  const rate = ctx.sampleRate;
  show("counts", `${(live.sent / rate).toFixed(1)} s / ${(live.received / rate).toFixed(1)} s`);
}

async function start({keep = false} = {}) {
  Object.assign(live, {error: null, ready: null, done: null, sent: 0, received: 0, delays: [], keep,
                       input: [], output: []});
  arrivals = []; pending = []; pendingLength = 0; playHead = 0;
  show("error", "");
  setStatus("starting");
  try {
    ctx = new AudioContext({sampleRate: 16000, latencyHint: "interactive"});
    micStream = await navigator.mediaDevices.getUserMedia(
      {audio: {echoCancellation: false, noiseSuppression: false, autoGainControl: false, channelCount: 1}});
    await ctx.audioWorklet.addModule("capture.js");
    node = new AudioWorkletNode(ctx, "voxanon-capture", {numberOfInputs: 1, numberOfOutputs: 0});
    node.port.onmessage = onCapture;
    ctx.createMediaStreamSource(micStream).connect(node);
    await ctx.resume();
  } catch (err) {
    fail(`microphone: ${err.message || err}`);
    return;
  }
  ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
  ws.binaryType = "arraybuffer";
  ws.onopen = () => ws.send(JSON.stringify({type: "hello", sample_rate: ctx.sampleRate, format: "f32"}));
  ws.onmessage = onReply;
  ws.onclose = () => { if (live.status === "live" || live.status === "stopping") fail("the server closed the session"); };
  document.getElementById("start").disabled = true;
  document.getElementById("stop").disabled = false;
}

function teardown() {
  if (node) { node.port.onmessage = null; node.disconnect(); node = null; }
  if (micStream) { micStream.getTracks().forEach(track => track.stop()); micStream = null; }
  document.getElementById("start").disabled = false;
  document.getElementById("stop").disabled = true;
}

function stop() {
  if (!ws || ws.readyState !== WebSocket.OPEN) return;
  if (pendingLength) sendPending();
  setStatus("stopping");
  if (node) { node.port.onmessage = null; }
  ws.send(JSON.stringify({type: "end"}));
  teardown();
}

document.getElementById("start").onclick = () => start();
document.getElementById("stop").onclick = () => stop();
