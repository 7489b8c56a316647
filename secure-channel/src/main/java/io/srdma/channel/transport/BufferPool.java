package io.srdma.channel.transport;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Heap buffers of one size that idle {@link TlsConnection}s give back and busy ones take, so that a
 * connection holds its TLS buffers only while bytes wait in them (an idle session holds none).
 * Every buffer is zeroed when given back: a buffer that held one connection's plaintext (the engine
 * decrypts records in place in the bytes read) never shows it to the next connection that takes it.
 * At most {@link #POOLED_PROP_NAME} buffers of a size wait here; beyond that a buffer given back is
 * left to the collector, and a taker finding none allocates one.
 *
 * <p>Thread-safe: {@link #acquire} and {@link #release} take a short lock and allocate nothing
 * while the pool has buffers and room.
 */
final class BufferPool {
  /** System property: most free buffers kept per size. */
  static final String POOLED_PROP_NAME = "srdma.tls.pooledBuffers";

  /** Default of {@link #POOLED_PROP_NAME}: 128 (about 2 MiB per size of a TLS record). */
  static final int POOLED_DEFAULT = 128;

  private static final ConcurrentHashMap<Integer, BufferPool> POOLS = new ConcurrentHashMap<>();

  private final int size;
  private final ByteBuffer[] free;
  private int count; // guarded by this
  private long allocated; // guarded by this

  BufferPool(int size, int capacity) {
    this.size = size;
    this.free = new ByteBuffer[capacity];
  }

  /** The process's pool of buffers of {@code size} bytes (made on first use). */
  static BufferPool of(int size) {
    return POOLS.computeIfAbsent(
        size,
        s -> new BufferPool(s, Math.max(0, Integer.getInteger(POOLED_PROP_NAME, POOLED_DEFAULT))));
  }

  /** Bytes in each buffer. */
  int size() {
    return size;
  }

  /** A cleared buffer of {@link #size} zero bytes: a pooled one, else a new one. */
  ByteBuffer acquire() {
    synchronized (this) {
      if (count > 0) {
        ByteBuffer b = free[--count];
        free[count] = null;
        return b;
      }
      allocated++;
    }
    return ByteBuffer.allocate(size);
  }

  /**
   * Zeroes {@code b} and keeps it for the next taker (or leaves it to the collector when the pool
   * is full or {@code b} is not one of its size). The caller must hold no other reference to it.
   */
  void release(ByteBuffer b) {
    if (b.capacity() != size || !b.hasArray()) {
      return;
    }
    Arrays.fill(b.array(), b.arrayOffset(), b.arrayOffset() + size, (byte) 0);
    b.clear();
    synchronized (this) {
      if (count < free.length) {
        free[count++] = b;
      }
    }
  }

  /** Free buffers waiting now. */
  synchronized int pooled() {
    return count;
  }

  /** Buffers this pool allocated because none was free. */
  synchronized long allocated() {
    return allocated;
  }

  /** A copy of the free buffers (tests: they must be all zeros). */
  synchronized ByteBuffer[] snapshot() {
    return Arrays.copyOf(free, count);
  }
}
