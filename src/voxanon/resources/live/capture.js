// AudioWorklet: hands each 128-frame block of the microphone (first channel) to the page.
class VoxanonCapture extends AudioWorkletProcessor {
  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) this.port.postMessage(channel.slice(0));
    return true;
  }
}
registerProcessor("voxanon-capture", VoxanonCapture);
