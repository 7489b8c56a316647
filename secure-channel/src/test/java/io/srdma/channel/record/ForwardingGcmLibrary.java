package io.srdma.channel.record;

import java.nio.ByteBuffer;

/**
 * A {@link GcmLibrary} that passes every call to another (tests), except {@link #jnr()} (null, as
 * for a library without downcalls): a test double overrides only the calls it changes.
 */
class ForwardingGcmLibrary implements GcmLibrary {
  final GcmLibrary real;

  ForwardingGcmLibrary(GcmLibrary real) {
    this.real = real;
  }

  @Override
  public String name() {
    return real.name();
  }

  @Override
  public String version() {
    return real.version();
  }

  @Override
  public long newContext() {
    return real.newContext();
  }

  @Override
  public void freeContext(long ctx) {
    real.freeContext(ctx);
  }

  @Override
  public boolean setKey(long ctx, long key, boolean encrypt) {
    return real.setKey(ctx, key, encrypt);
  }

  @Override
  public boolean seal(
      long ctx,
      long nonce,
      long aad,
      int aadLength,
      long in,
      ByteBuffer pinnedIn,
      long out,
      int length,
      long word) {
    return real.seal(ctx, nonce, aad, aadLength, in, pinnedIn, out, length, word);
  }

  @Override
  public int open(
      long ctx,
      long nonce,
      long aad,
      int aadLength,
      long in,
      long out,
      ByteBuffer pinnedOut,
      int length,
      long word) {
    return real.open(ctx, nonce, aad, aadLength, in, out, pinnedOut, length, word);
  }
}
