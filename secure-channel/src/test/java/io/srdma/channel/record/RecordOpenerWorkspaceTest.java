package io.srdma.channel.record;

import static io.srdma.channel.ByteSearch.contains;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** Openers of one thread sharing a {@link RecordOpener.Workspace} (the host's opener threads). */
class RecordOpenerWorkspaceTest {
  private static final int MAX = 4096;
  private static final RecordBinding KV = RecordBinding.of(7, "acme", "kvcache");

  private final ByteBuffer region = ByteBuffer.allocateDirect(1 << 16);

  @Test
  void shouldOpenEachSessionsRecordsThroughOneWorkspace() throws Exception {
    RecordOpener.Workspace shared = new RecordOpener.Workspace(MAX);
    try (SessionPair a = new SessionPair();
        SessionPair b = new SessionPair()) {
      RecordSealer sealA = new RecordSealer(a.initiator.sendKeys(), MAX);
      RecordSealer sealB = new RecordSealer(b.initiator.sendKeys(), MAX);
      RecordOpener openA = RecordOpener.forSchedule(a.responder, MAX, shared);
      RecordOpener openB = RecordOpener.forSchedule(b.responder, MAX, shared);
      byte[] secretA = "session A's secret".getBytes(StandardCharsets.UTF_8);
      byte[] secretB = "B".getBytes(StandardCharsets.UTF_8);
      int na = sealA.seal(ByteBuffer.wrap(secretA), KV, 0, region, 0);
      int nb = sealB.seal(ByteBuffer.wrap(secretB), KV, 1024, region, 1024);
      ByteBuffer out = ByteBuffer.allocate(MAX);
      assertEquals(OpenResult.OK, openA.open(region, 0, na, KV, 0, out));
      assertArrayEquals(secretA, java.util.Arrays.copyOf(out.array(), out.position()));
      out.clear();
      assertEquals(OpenResult.OK, openB.open(region, 1024, nb, KV, 1024, out));
      assertArrayEquals(secretB, java.util.Arrays.copyOf(out.array(), out.position()));
      // a session's records do not open with another's opener, shared workspace or not
      out.clear();
      assertNotEquals(OpenResult.OK, openB.open(region, 0, na, KV, 0, out));
    }
  }

  @Test
  void shouldLeaveNoPlaintextInASharedWorkspace() throws Exception {
    RecordOpener.Workspace shared = new RecordOpener.Workspace(MAX);
    try (SessionPair a = new SessionPair()) {
      RecordSealer seal = new RecordSealer(a.initiator.sendKeys(), MAX);
      RecordOpener open = RecordOpener.forSchedule(a.responder, MAX, shared);
      byte[] secret = "plaintext that must not stay behind".getBytes(StandardCharsets.UTF_8);
      // a direct destination (JCE: via the workspace's array) and a heap one (openssl: via the
      // context's native scratch): neither may leave the plaintext in the shared workspace
      for (ByteBuffer to :
          new ByteBuffer[] {ByteBuffer.allocateDirect(MAX), ByteBuffer.allocate(MAX)}) {
        int n = seal.seal(ByteBuffer.wrap(secret), KV, 0, region, 0);
        assertEquals(OpenResult.OK, open.open(region, 0, n, KV, 0, to));
        byte[] got = new byte[secret.length];
        to.flip().get(got);
        assertArrayEquals(secret, got);
        if (shared.plain != null) {
          assertFalse(contains(shared.plain, secret), "plaintext left in the workspace's array");
        }
        if (shared.nativeGcmForTest() != null) {
          ByteBuffer scratch = shared.nativeGcmForTest().scratchForTest();
          byte[] all = new byte[scratch.capacity()];
          scratch.get(0, all);
          assertFalse(contains(all, secret), "plaintext left in the workspace's native scratch");
        }
      }
      assertTrue(shared.plain != null || shared.nativeGcmForTest() != null, "nothing inspected");
    }
  }

  @Test
  void shouldRefuseAWorkspaceSmallerThanTheOpenersRecords() throws Exception {
    try (SessionPair a = new SessionPair()) {
      RecordOpener.Workspace small = new RecordOpener.Workspace(1024);
      assertThrows(RecordException.class, () -> RecordOpener.forSchedule(a.responder, MAX, small));
    }
  }
}
