package io.srdma.channel.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Random and mutated bytes, fed to {@link FrameReader} from a finite stream: the only outcomes are
 * valid frames (every accessor works), {@link ProtocolException}, or a clean end; never another
 * exception, never a hang, and never an allocation near the peer-chosen length.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class FrameFuzzTest {
  private static final long SEED = 0x5352_0001L;
  private static final int ROUNDS = 20_000;

  private static final byte[][] CORPUS = corpus();
  private static final List<MessageType> TYPES = List.copyOf(EnumSet.allOf(MessageType.class));

  private static byte[][] corpus() {
    byte[] client = Frames.clientFrames();
    byte[] server = Frames.serverFrames();
    return new byte[][] {client, server};
  }

  /** One mutation of a valid stream, chosen by {@code random}. */
  private static byte[] mutate(Random random, byte[] valid) {
    byte[] b = valid.clone();
    switch (random.nextInt(7)) {
      case 0 -> { // pure noise
        b = new byte[random.nextInt(300)];
        random.nextBytes(b);
      }
      case 1 -> { // flip a few bytes anywhere
        for (int i = 1 + random.nextInt(4); i > 0; i--) {
          b[random.nextInt(b.length)] ^= (byte) (1 + random.nextInt(255));
        }
      }
      case 2 -> b = Arrays.copyOf(b, random.nextInt(b.length)); // truncate
      case 3 -> { // a random body length in the first header
        int v = random.nextInt();
        b[12] = (byte) (v >>> 24);
        b[13] = (byte) (v >>> 16);
        b[14] = (byte) (v >>> 8);
        b[15] = (byte) v;
      }
      case 4 -> { // boundary values in a random field position
        int at = random.nextInt(b.length);
        byte v = new byte[] {0, (byte) 0xff, (byte) 0x7f, (byte) 0x80, 1}[random.nextInt(5)];
        for (int i = at; i < Math.min(b.length, at + 1 + random.nextInt(8)); i++) {
          b[i] = v;
        }
      }
      case 5 -> { // insert or delete a byte
        int at = random.nextInt(b.length);
        byte[] c = new byte[b.length + (random.nextBoolean() ? 1 : -1)];
        if (c.length > b.length) {
          System.arraycopy(b, 0, c, 0, at);
          c[at] = (byte) random.nextInt();
          System.arraycopy(b, at, c, at + 1, b.length - at);
        } else {
          System.arraycopy(b, 0, c, 0, at);
          System.arraycopy(b, at + 1, c, at, b.length - at - 1);
        }
        b = c;
      }
      default -> { // valid frames followed by noise
        b = Arrays.copyOf(b, b.length + 1 + random.nextInt(40));
        for (int i = valid.length; i < b.length; i++) {
          b[i] = (byte) random.nextInt();
        }
      }
    }
    return b;
  }

  @Test
  void shouldYieldOnlyValidFramesOrProtocolExceptions() {
    Random random = new Random(SEED);
    Map<ProtocolException.Reason, Integer> reasons = new EnumMap<>(ProtocolException.Reason.class);
    int frames = 0;
    for (int round = 0; round < ROUNDS; round++) {
      int which = random.nextInt(CORPUS.length);
      byte[] input = mutate(random, CORPUS[which]);
      Side from = which == 0 ? Side.CLIENT : Side.SERVER;
      FrameReader reader = new FrameReader(new ByteArrayInputStream(input), from);
      try {
        for (int reads = 0; ; reads++) {
          assertTrue(reads <= input.length, "more frames than bytes: no progress");
          Frame f = reader.read();
          if (f == null) {
            break;
          }
          Frames.touch(f);
          frames++;
        }
      } catch (ProtocolException e) {
        reasons.merge(e.reason(), 1, Integer::sum);
      } catch (IOException | RuntimeException e) {
        fail("round " + round + " (seed " + SEED + "): " + e, e);
      }
    }
    assertTrue(frames > 0, "some mutations must leave valid frames");
    for (ProtocolException.Reason r :
        new ProtocolException.Reason[] {
          ProtocolException.Reason.BAD_MAGIC,
          ProtocolException.Reason.TRUNCATED,
          ProtocolException.Reason.FRAME_TOO_LARGE,
          ProtocolException.Reason.UNKNOWN_TYPE
        }) {
      assertTrue(reasons.containsKey(r), r + " never seen: " + reasons);
    }
  }

  @Test
  void shouldNotAllocateWhatTheHeaderClaims() throws IOException {
    java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
    assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "no allocation counter");
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) bean;
    assumeTrue(
        threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());

    Random random = new Random(SEED + 1);
    int limit = FrameReader.MAX_BODY_LENGTH_DEFAULT;
    for (int round = 0; round < 2_000; round++) {
      // a header claiming a large body, then a little of it
      int claimed =
          round % 2 == 0 ? Integer.MAX_VALUE - random.nextInt(1000) : random.nextInt(limit * 4);
      byte[] body = new byte[random.nextInt(64)];
      random.nextBytes(body);
      MessageType type = TYPES.get(random.nextInt(TYPES.size()));
      byte[] input = Frames.raw(0x5352, 1, type.code(), 0, 0, 1, claimed, body);
      FrameReader reader = new FrameReader(new ByteArrayInputStream(input), Side.CLIENT);
      assertEquals(16 + MessageType.largestBodyLength(), reader.bufferCapacity());
      long before = threads.getCurrentThreadAllocatedBytes();
      try {
        reader.read();
      } catch (ProtocolException expected) {
        // the usual outcome
      }
      long allocated = threads.getCurrentThreadAllocatedBytes() - before;
      assertTrue(
          allocated < limit, "read of a frame claiming " + claimed + " allocated " + allocated);
    }
  }
}
