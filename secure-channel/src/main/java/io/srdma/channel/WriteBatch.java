package io.srdma.channel;

import java.nio.ByteBuffer;

/**
 * Pieces to write through one grant with one call ({@link RemoteGrant#tryWriteBatch}): pieces that
 * follow each other in the grant (one's record space ends where the next begins; see below) are
 * sealed together as one record (one AES-GCM operation, one WRITE_WITH_IMM), the others as records
 * of their own; all of them are posted with one post list (one doorbell).
 *
 * <p>Contiguous means: piece {@code k + 1}'s relative offset equals piece {@code k}'s relative
 * offset plus its length, and the first piece of a run gives the record's offset. A run whose bytes
 * exceed the client's record size ({@link ClientOptions#maxRecordPayload}) refuses the whole batch
 * ({@link WriteResult#INVALID_ARGUMENT}, nothing posted): a record cannot be cut there, since the
 * next one would overwrite its tag. A run's record takes {@link SealedLayout#RECORD_OVERHEAD} bytes
 * more than its pieces, placed at its first offset: the host opens one record there holding every
 * piece's bytes in order. Records of a batch must not overlap, whatever the order of the pieces
 * (the later would overwrite the earlier, which the host would then reject): a run whose record
 * overlaps another's refuses the whole batch ({@link WriteResult#INVALID_ARGUMENT}, nothing
 * posted).
 *
 * <p>Thread safety: not thread-safe; one thread fills and writes a batch. Reusable: {@link
 * #clear()} and fill again; nothing is allocated after construction. Buffers: the batch holds
 * references only; the bytes are read (sealed into registered staging memory) during {@code
 * tryWriteBatch}, so buffers may be changed or reused as soon as it returns.
 */
public final class WriteBatch {
  private final long[] offsets;
  private final ByteBuffer[] buffers;
  private final int[] from;
  private final int[] lengths;
  private int size;

  /** A batch of at most {@code capacity} pieces. */
  public WriteBatch(int capacity) {
    if (capacity < 1 || capacity > 4096) {
      throw new ChannelException(
          ChannelException.Reason.INVALID_ARGUMENT, "capacity must be 1..4096, got " + capacity);
    }
    offsets = new long[capacity];
    buffers = new ByteBuffer[capacity];
    from = new int[capacity];
    lengths = new int[capacity];
  }

  /**
   * Adds {@code length} bytes of {@code buffer} from index {@code offset} (absolute, within the
   * buffer's limit throughout the write, else the batch is refused with {@link
   * WriteResult#INVALID_ARGUMENT} and nothing is posted; its position is not used, neither is
   * moved) to be written at {@code relativeOffset} of the grant.
   *
   * @return false when the batch is full (nothing added)
   */
  public boolean add(long relativeOffset, ByteBuffer buffer, int offset, int length) {
    if (size == offsets.length) {
      return false;
    }
    offsets[size] = relativeOffset;
    buffers[size] = buffer;
    from[size] = offset;
    lengths[size] = length;
    size++;
    return true;
  }

  /** Empties the batch (drops its buffer references). */
  public void clear() {
    for (int i = 0; i < size; i++) {
      buffers[i] = null;
    }
    size = 0;
  }

  /** Pieces in the batch. */
  public int size() {
    return size;
  }

  /** Most pieces the batch holds. */
  public int capacity() {
    return offsets.length;
  }

  long relativeOffset(int i) {
    return offsets[i];
  }

  ByteBuffer buffer(int i) {
    return buffers[i];
  }

  int from(int i) {
    return from[i];
  }

  int length(int i) {
    return lengths[i];
  }
}
