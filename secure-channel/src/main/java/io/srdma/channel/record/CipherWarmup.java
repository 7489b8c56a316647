package io.srdma.channel.record;

import io.srdma.keys.Direction;
import io.srdma.keys.DirectionKeys;
import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Warms the JDK's AES-GCM path once per JVM, on a background thread: until the JIT has compiled it,
 * sealing a 64 KiB record runs at a few percent of its speed for the first several hundred calls.
 * Uses a throwaway key; nothing it seals leaves the JVM.
 */
public final class CipherWarmup {
  private static final AtomicBoolean STARTED = new AtomicBoolean();
  private static final int RECORDS = 3000;
  private static final int PAYLOAD = 8 * 1024;

  private CipherWarmup() {}

  /** Starts the warm-up unless it ran already; returns at once. */
  @SuppressWarnings("ThreadPriorityCheck") // a hint only: the warm-up should yield to real work
  public static void start() {
    if (!STARTED.compareAndSet(false, true)) {
      return;
    }
    Thread t = new Thread(CipherWarmup::run, "srdma-cipher-warmup");
    t.setDaemon(true);
    t.setPriority(Thread.MIN_PRIORITY);
    t.start();
  }

  private static void run() {
    byte[] key = new byte[DirectionKeys.KEY_LENGTH];
    new SecureRandom().nextBytes(key);
    try (DirectionKeys keys =
        DirectionKeys.fromMaterial(Direction.INITIATOR_TO_RESPONDER, 0, key, new byte[4])) {
      java.util.Arrays.fill(key, (byte) 0);
      RecordSealer sealer = new RecordSealer(keys, PAYLOAD);
      RecordOpener opener = new RecordOpener(e -> keys, PAYLOAD, false);
      RecordBinding binding = RecordBinding.of(1, "warmup", "warmup");
      ByteBuffer plain = ByteBuffer.allocate(PAYLOAD);
      ByteBuffer record = ByteBuffer.allocateDirect(PAYLOAD + RecordSealer.OVERHEAD);
      ByteBuffer out = ByteBuffer.allocate(PAYLOAD);
      for (int i = 0; i < RECORDS; i++) {
        int n = sealer.seal(plain, binding, 0, record, 0);
        out.clear();
        opener.open(record, 0, n, binding, 0, out);
      }
    }
  }
}
