package io.srdma.host;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * A session's control-connection output that tells how long the write in progress has been blocked,
 * so the {@link SessionWatchdog} can close a connection whose peer stopped reading: a socket write
 * has no timeout, and a thread stuck in one (the session's, or the host's timer telling of an
 * expiry) would otherwise wait forever. Writes are serialized by the caller ({@code ControlProxy}
 * is synchronized); {@link #blockedSince} may be read from any thread.
 */
final class WatchedOutputStream extends FilterOutputStream {
  private volatile long since;

  WatchedOutputStream(OutputStream out) {
    super(out);
  }

  /** {@link System#nanoTime} when the write in progress began, or 0 when none is. */
  long blockedSince() {
    return since;
  }

  @Override
  public void write(int b) throws IOException {
    begin();
    try {
      out.write(b);
    } finally {
      since = 0;
    }
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    begin();
    try {
      out.write(b, off, len);
    } finally {
      since = 0;
    }
  }

  @Override
  public void flush() throws IOException {
    begin();
    try {
      out.flush();
    } finally {
      since = 0;
    }
  }

  private void begin() {
    long now = System.nanoTime();
    since = now == 0 ? 1 : now;
  }
}
