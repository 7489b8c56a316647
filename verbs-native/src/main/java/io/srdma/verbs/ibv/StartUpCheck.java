package io.srdma.verbs.ibv;

import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up checks of a device, once per device per JVM: every object kind is created once (each
 * creation cross-checks the struct fields read back, see {@link LayoutProbe}), and one RDMA WRITE
 * to the device itself goes through a type-2 window at a range outside the window but inside its
 * memory region. A device that lets it through (rxe does) does not enforce window bounds: grants
 * must then be scoped by a memory region registered over exactly the granted range.
 */
final class StartUpCheck {
  private static final Logger LOG = LoggerFactory.getLogger(StartUpCheck.class);
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final Map<String, Boolean> RESULTS = new ConcurrentHashMap<>();

  private StartUpCheck() {}

  /** Whether {@code ctx}'s device enforces window bounds; runs the test on first use. */
  static boolean windowBoundsEnforced(IbvDeviceContext ctx) {
    String key = ctx.device().name() + "/" + ctx.portNumber() + "/" + ctx.gidIndex();
    Boolean known = RESULTS.get(key);
    if (known != null) {
      return known;
    }
    synchronized (StartUpCheck.class) {
      return RESULTS.computeIfAbsent(key, k -> run(ctx));
    }
  }

  private static boolean run(IbvDeviceContext ctx) {
    String name = ctx.device().name();
    int rw = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;
    try (ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionQueue cq = ctx.createCompletionQueue(16);
        QueuePair requester = pd.createQueuePair(QueuePairAttributes.of(cq, 4, 1));
        QueuePair owner = pd.createQueuePair(QueuePairAttributes.of(cq, 4, 1));
        MemoryRegion src = pd.registerMemory(ByteBuffer.allocateDirect(64), rw);
        MemoryRegion region =
            pd.registerMemory(
                ByteBuffer.allocateDirect(4096), AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND);
        MemoryWindow mw = pd.allocateMemoryWindow()) {
      requester.init(AccessFlags.REMOTE_WRITE);
      owner.init(AccessFlags.REMOTE_WRITE);
      requester.readyToReceive(owner.localInfo());
      owner.readyToReceive(requester.localInfo());
      requester.readyToSend();
      owner.readyToSend();
      WorkCompletion[] wc = {new WorkCompletion()};
      owner.postSend(
          new SendWorkRequest(1)
              .wrId(1)
              .bind(mw, region, region.address() + 1024, 256, AccessFlags.REMOTE_WRITE));
      WcStatus bind = awaitStatus(cq, wc);
      if (bind != WcStatus.SUCCESS) {
        LOG.warn(
            "ibv {}: type-2 window bind failed in the start-up self-test ({}); treating window"
                + " bounds as NOT enforced: grants will be scoped by per-grant memory regions",
            name,
            bind);
        return false;
      }
      SendWorkRequest write =
          new SendWorkRequest(1)
              .wrId(2)
              .opcode(WrOpcode.RDMA_WRITE)
              .remote(region.address() + 1024 + 256, mw.rkey());
      write.sgl().set(src, 0, 8);
      requester.postSend(write);
      WcStatus outside = awaitStatus(cq, wc);
      boolean enforced = outside == WcStatus.REM_ACCESS_ERR;
      if (enforced) {
        LOG.info(
            "ibv {}: memory window bounds are enforced (self-test refused with {})", name, outside);
      } else {
        LOG.warn(
            "ibv {}: memory window bounds are NOT enforced (an RDMA WRITE outside a bound type-2"
                + " window but inside its region completed with {}); grants on this device are"
                + " scoped by memory regions registered over exactly the granted range",
            name,
            outside);
      }
      return enforced;
    } catch (VerbsException e) {
      if (e.reason() == VerbsException.Reason.PROVIDER_UNAVAILABLE) {
        throw e;
      }
      LOG.warn(
          "ibv {}: window self-test could not run ({}); treating window bounds as NOT enforced",
          name,
          e.getMessage());
      return false;
    }
  }

  private static WcStatus awaitStatus(CompletionQueue cq, WorkCompletion[] wc) {
    if (cq.await(wc, WAIT) == 0) {
      throw new VerbsException(
          VerbsException.Reason.IO, "self_test", "no completion within " + WAIT);
    }
    return wc[0].status();
  }
}
