package io.srdma.host;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * One opened record as the host application sees it. Each opener thread reuses one instance (and
 * one plaintext buffer) for every record it delivers to a {@link RecordListener}: read it during
 * the call only, on the calling thread.
 *
 * <p>Thread safety: not thread-safe; each opener thread fills and reuses its own instance. Buffers:
 * {@link #payload} is a read-only view of the opener's plaintext buffer, valid during the
 * listener's call only; copy what must outlive it. Past the record's limit the buffer holds zeros,
 * never an earlier record's bytes (the opener thread serves many sessions and tenants).
 */
public final class ReceivedRecord {
  private static final byte[] ZEROS = new byte[4096];

  private String identity;
  private String tenant;
  private String region;
  private long grantId;
  private long offset;
  private ByteBuffer payload; // a read-only view of plain, made once per plaintext buffer
  private ByteBuffer plain;
  private ByteBuffer opened; // the buffer records were last opened into
  private ByteBuffer wiper; // a full-capacity view of it when it is direct
  private int dirty; // bytes of it that may still hold an earlier record's plaintext

  /**
   * Called after every record opened into {@code plaintext} (flipped: position 0, limit its
   * length), delivered or not: wipes what is left past it of a longer earlier record, which may
   * have been another session's or tenant's, so that no view of the buffer (a listener that clears
   * its view) reaches bytes of any record but this one.
   */
  void opened(ByteBuffer plaintext) {
    if (opened != plaintext) {
      opened = plaintext;
      wiper = plaintext.hasArray() ? null : plaintext.duplicate(); // made once per buffer
      dirty = plaintext.capacity(); // unknown history: wipe it all once
    }
    int end = plaintext.limit();
    if (dirty > end) {
      zero(plaintext, end, dirty);
    }
    dirty = end;
  }

  /**
   * Zeroes {@code from} to {@code to} (up to its capacity) of the heap or direct buffer records are
   * opened into (a native AES-GCM opens into a direct one).
   */
  private void zero(ByteBuffer b, int from, int to) {
    if (wiper == null) {
      Arrays.fill(b.array(), b.arrayOffset() + from, b.arrayOffset() + to, (byte) 0);
      return;
    }
    wiper.clear();
    for (int at = from; at < to; at += ZEROS.length) {
      wiper.put(at, ZEROS, 0, Math.min(ZEROS.length, to - at));
    }
  }

  /**
   * Fills this record for one delivery; {@code plaintext}'s position to limit is the payload. The
   * read-only view handed out is made once per plaintext buffer and re-pointed per record (no
   * allocation per record); a listener that moved its position or limit gets it reset.
   */
  ReceivedRecord set(
      String identity,
      String tenant,
      String region,
      long grantId,
      long offset,
      ByteBuffer plaintext) {
    this.identity = identity;
    this.tenant = tenant;
    this.region = region;
    this.grantId = grantId;
    this.offset = offset;
    if (plain != plaintext) {
      plain = plaintext;
      payload = plaintext.asReadOnlyBuffer();
    }
    payload.clear().limit(plaintext.limit()).position(plaintext.position());
    return this;
  }

  /** The writer's identity ({@code srdma://tenant/peer}, from its certificate). */
  public String identity() {
    return identity;
  }

  /** The tenant. */
  public String tenant() {
    return tenant;
  }

  /** The region written. */
  public String region() {
    return region;
  }

  /** The grant the record was written under. */
  public long grantId() {
    return grantId;
  }

  /** The record's offset in the region. */
  public long offset() {
    return offset;
  }

  /** The plaintext, read-only, position 0; valid during the call only. */
  public ByteBuffer payload() {
    return payload;
  }
}
