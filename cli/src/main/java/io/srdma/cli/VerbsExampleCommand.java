package io.srdma.cli;

import io.srdma.server.Addresses;
import io.srdma.verbs.AccessFlags;
import io.srdma.verbs.CompletionQueue;
import io.srdma.verbs.Device;
import io.srdma.verbs.DeviceContext;
import io.srdma.verbs.DeviceOptions;
import io.srdma.verbs.MemoryRegion;
import io.srdma.verbs.MemoryWindow;
import io.srdma.verbs.ProtectionDomain;
import io.srdma.verbs.QueuePair;
import io.srdma.verbs.QueuePairAttributes;
import io.srdma.verbs.RdmaProviders;
import io.srdma.verbs.SendWorkRequest;
import io.srdma.verbs.VerbsException;
import io.srdma.verbs.WcStatus;
import io.srdma.verbs.WorkCompletion;
import io.srdma.verbs.WrOpcode;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code srdma verbs-example}: two RC queue pairs on loopback. A client writes into a window the
 * owner bound for it, reads it back, then tries to write one byte past the window, into a region of
 * its own guess, and after the owner's LOCAL_INV: each refused by the responder. Exit 0 only when
 * every outcome is the expected one.
 */
@Command(
    name = "verbs-example",
    mixinStandardHelpOptions = true,
    description = {
      "RDMA WRITE/READ between two QPs on loopback, and attacks the responder refuses.",
      "",
      "Connects two queue pairs, moves data through a type-2 memory window, then tries a write"
          + " one byte past the window, a guessed rkey and a revoked window. Exits 0 only when"
          + " every outcome is the expected one."
    })
public final class VerbsExampleCommand implements Callable<Integer> {
  private static final Duration WAIT = Duration.ofSeconds(10);

  @Option(
      names = "--provider",
      defaultValue = "soft",
      description = "RDMA provider: soft, ibv or auto (default: ${DEFAULT-VALUE}).")
  String provider;

  @Option(
      names = "--size",
      defaultValue = "4096",
      paramLabel = "SIZE",
      converter = SizeConverter.class,
      description =
          "Bytes the owner exposes to the client, 16 B to 64 MiB, like 4096, 64KiB or 1MB"
              + " (docs/units.md) (default: ${DEFAULT-VALUE}).")
  long sizeOption;

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    if (sizeOption < 16 || sizeOption > (64 << 20)) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(),
          "--size must be 16 B to 64 MiB, got " + io.srdma.policy.Units.formatSize(sizeOption));
    }
    int size = (int) sizeOption;
    Device device;
    try {
      device = RdmaProviders.firstDevice(provider);
    } catch (VerbsException e) {
      spec.commandLine().getErr().println("srdma verbs-example: " + Addresses.explain(e));
      return 2;
    }
    try (DeviceContext ownerCtx = device.open(new DeviceOptions());
        DeviceContext clientCtx = device.open(new DeviceOptions());
        ProtectionDomain ownerPd = ownerCtx.allocateProtectionDomain();
        ProtectionDomain clientPd = clientCtx.allocateProtectionDomain();
        CompletionQueue ownerCq = ownerCtx.createCompletionQueue(64);
        CompletionQueue clientCq = clientCtx.createCompletionQueue(64);
        MemoryRegion region =
            ownerPd.registerMemory(
                ByteBuffer.allocateDirect(2 * size),
                AccessFlags.LOCAL_WRITE | AccessFlags.MW_BIND);
        MemoryRegion local =
            clientPd.registerMemory(ByteBuffer.allocateDirect(size), AccessFlags.LOCAL_WRITE)) {
      out.printf(
          "provider %s, device %s: owner exposes %d bytes through a type-2 memory window%n",
          device.providerName(), device.name(), size);
      long windowStart = region.address() + size / 2;
      byte[] message = "hello from the client over RDMA WRITE".getBytes(StandardCharsets.UTF_8);
      boolean ok = true;

      try (Link link = new Link(ownerPd, ownerCq, clientPd, clientCq);
          MemoryWindow window = ownerPd.allocateMemoryWindow()) {
        out.printf(
            "connected QP 0x%06x (owner) <-> QP 0x%06x (client)%n",
            link.owner.qpn(), link.client.qpn());
        int rkey = bind(link, window, region, windowStart, size);
        ok &= expect(out, ownerCq, WcStatus.SUCCESS, "owner binds the window to the client's QP");
        local.buffer().put(0, message);
        post(link.client, WrOpcode.RDMA_WRITE, local, message.length, windowStart, rkey);
        ok &=
            expect(
                out,
                clientCq,
                WcStatus.SUCCESS,
                "client RDMA WRITEs " + message.length + " bytes into the window");
        byte[] landed = new byte[message.length];
        region.buffer().get(size / 2, landed);
        ok &=
            check(
                out,
                java.util.Arrays.equals(landed, message),
                "owner's memory now holds: \"" + new String(landed, StandardCharsets.UTF_8) + "\"");
        local.buffer().put(0, new byte[message.length]);
        post(link.client, WrOpcode.RDMA_READ, local, message.length, windowStart, rkey);
        ok &= expect(out, clientCq, WcStatus.SUCCESS, "client RDMA READs them back");
        post(link.client, WrOpcode.RDMA_WRITE, local, 1, windowStart + size, rkey);
        ok &=
            expect(
                out,
                clientCq,
                WcStatus.REM_ACCESS_ERR,
                "attack: write 1 byte past the window -> refused by the responder");
      }
      try (Link link = new Link(ownerPd, ownerCq, clientPd, clientCq)) {
        int guess = new java.security.SecureRandom().nextInt();
        post(link.client, WrOpcode.RDMA_WRITE, local, 8, windowStart, guess);
        ok &=
            expect(
                out,
                clientCq,
                WcStatus.REM_ACCESS_ERR,
                "attack: write with a guessed rkey -> refused");
      }
      try (Link link = new Link(ownerPd, ownerCq, clientPd, clientCq);
          MemoryWindow window = ownerPd.allocateMemoryWindow()) {
        int rkey = bind(link, window, region, windowStart, size);
        ok &= expect(out, ownerCq, WcStatus.SUCCESS, "owner binds a new window (new rkey)");
        link.owner.postSend(new SendWorkRequest(1).wrId(3).localInvalidate(rkey));
        ok &= expect(out, ownerCq, WcStatus.SUCCESS, "owner revokes it with LOCAL_INV");
        post(link.client, WrOpcode.RDMA_WRITE, local, 8, windowStart, rkey);
        ok &=
            expect(
                out,
                clientCq,
                WcStatus.REM_ACCESS_ERR,
                "attack: write through the revoked window -> refused");
      }
      ok &=
          check(
              out,
              untouchedOutside(region, size / 2, message.length),
              "no byte outside the written range changed");
      out.println(
          ok
              ? "verbs example: every outcome as expected"
              : "verbs example: UNEXPECTED OUTCOMES (see FAIL lines)");
      return ok ? 0 : 1;
    }
  }

  /** Two connected QPs, owner side allowing remote write and read. */
  private static final class Link implements AutoCloseable {
    final QueuePair owner;
    final QueuePair client;

    Link(
        ProtectionDomain ownerPd,
        CompletionQueue ownerCq,
        ProtectionDomain clientPd,
        CompletionQueue clientCq) {
      owner = ownerPd.createQueuePair(QueuePairAttributes.of(ownerCq, 16, 1));
      client = clientPd.createQueuePair(QueuePairAttributes.of(clientCq, 16, 1));
      owner.init(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
      client.init(0);
      owner.readyToReceive(client.localInfo());
      client.readyToReceive(owner.localInfo());
      owner.readyToSend();
      client.readyToSend();
    }

    @Override
    public void close() {
      client.close();
      owner.close();
    }
  }

  private static int bind(
      Link link, MemoryWindow window, MemoryRegion region, long start, int size) {
    int rights = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
    link.owner.postSend(new SendWorkRequest(1).wrId(1).bind(window, region, start, size, rights));
    return window.rkey();
  }

  private static boolean untouchedOutside(MemoryRegion region, int from, int len) {
    ByteBuffer b = region.buffer();
    for (int i = 0; i < b.capacity(); i++) {
      if ((i < from || i >= from + len) && b.get(i) != 0) {
        return false;
      }
    }
    return true;
  }

  private static void post(
      QueuePair qp, WrOpcode op, MemoryRegion local, int len, long remote, int rkey) {
    SendWorkRequest wr = new SendWorkRequest(1).wrId(2).opcode(op).remote(remote, rkey);
    wr.sgl().set(local, 0, len);
    qp.postSend(wr);
  }

  private static boolean expect(
      PrintWriter out, CompletionQueue cq, WcStatus expected, String what) {
    WorkCompletion[] wc = {new WorkCompletion()};
    int n = cq.await(wc, WAIT);
    WcStatus got = n == 0 ? null : wc[0].status();
    return check(
        out, got == expected, what + " -> " + (got == null ? "no completion within " + WAIT : got));
  }

  private static boolean check(PrintWriter out, boolean ok, String line) {
    out.printf("  [%s] %s%n", ok ? " ok " : "FAIL", line);
    out.flush();
    return ok;
  }
}
