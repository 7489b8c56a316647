package io.srdma.host;

import io.srdma.channel.protocol.Frame;
import io.srdma.channel.protocol.ProtocolException;
import java.io.IOException;

/**
 * An established session's control frames, one at a time: GRANT_REQUEST and RELEASE to the {@link
 * GrantScoper}, REKEY, PING, CLOSE, ERROR; anything else is a protocol violation. It never reads
 * from the connection itself ({@link #onFrame} takes a decoded frame), so a blocking read loop
 * (today's thread per session) or an event loop can drive it. Confined to the thread that drives
 * it.
 */
final class ControlDispatch {
  private final HostSession s;
  private int announcedEpoch;

  ControlDispatch(HostSession session) {
    this.s = session;
  }

  /**
   * Handles one frame.
   *
   * @return null to go on, else why the session ends
   * @throws ProtocolException for a frame not expected now or a bad value
   * @throws IOException when the answer cannot be written
   */
  String onFrame(Frame f) throws IOException {
    switch (f.type()) {
      case GRANT_REQUEST -> s.grants.request(f);
      case RELEASE -> s.grants.release(f);
      case REKEY -> rekey(f);
      case PING -> s.proxy.pong(f.requestId(), f.ping().payload());
      case PONG -> {}
      case CLOSE -> {
        s.proxy.close(0);
        return "closed by the peer";
      }
      case ERROR -> {
        return "peer sent ERROR " + f.error().code();
      }
      default ->
          throw new ProtocolException(
              ProtocolException.Reason.UNEXPECTED_TYPE, f.type() + " is not expected now");
    }
    return null;
  }

  /**
   * The client announces a new epoch. Its records of that epoch open at once (the key schedule
   * looks one epoch ahead); the session's opener moves the schedule forward when it opens the first
   * of them, so records of the old epoch that are still in flight behind the announcement keep
   * opening: the control connection and the queue pair are not ordered with each other.
   */
  private void rekey(Frame f) throws IOException {
    int epoch = f.rekey().epoch();
    if (epoch != announcedEpoch + 1) {
      throw new ProtocolException(
          ProtocolException.Reason.BAD_VALUE,
          "REKEY to epoch " + epoch + " does not follow " + announcedEpoch);
    }
    announcedEpoch = epoch;
    s.proxy.rekey(f.requestId(), epoch);
  }
}
