package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/**
 * A provider that does not implement shared receive queues refuses them clearly: the default of
 * {@link ProtectionDomain#createSharedReceiveQueue}.
 */
class SharedReceiveQueueDefaultTest {
  private static final class StubDevice implements Device {
    @Override
    public String name() {
      return "stub0";
    }

    @Override
    public String providerName() {
      return "stub";
    }

    @Override
    public DeviceContext open(DeviceOptions options) {
      throw new UnsupportedOperationException();
    }
  }

  private static final class StubContext implements DeviceContext {
    @Override
    public Device device() {
      return new StubDevice();
    }

    @Override
    public DeviceAttributes queryDevice() {
      throw new UnsupportedOperationException();
    }

    @Override
    public ProtectionDomain allocateProtectionDomain() {
      return new StubDomain(this);
    }

    @Override
    public CompletionQueue createCompletionQueue(int capacity) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {}
  }

  /** Implements only what every provider must: no shared receive queues. */
  private record StubDomain(DeviceContext context) implements ProtectionDomain {
    @Override
    public MemoryRegion registerMemory(ByteBuffer buffer, int access) {
      throw new UnsupportedOperationException();
    }

    @Override
    public MemoryWindow allocateMemoryWindow() {
      throw new UnsupportedOperationException();
    }

    @Override
    public QueuePair createQueuePair(QueuePairAttributes attributes) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {}
  }

  @Test
  void shouldRefuseSharedReceiveQueuesAsNotSupportedNamingTheProvider() {
    ProtectionDomain pd = new StubContext().allocateProtectionDomain();
    VerbsException e = assertThrows(VerbsException.class, () -> pd.createSharedReceiveQueue(16, 1));
    assertEquals(VerbsException.Reason.NOT_SUPPORTED, e.reason());
    assertEquals("create_srq", e.verb());
    assertTrue(e.getMessage().contains("stub provider"), e::getMessage);
  }
}
