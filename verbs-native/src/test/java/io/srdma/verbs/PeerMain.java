package io.srdma.verbs;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * The other process of {@link PeerProcessContractTest}: opens a device, registers 1 MiB for remote
 * write and read, prints {@code INFO <connection info hex> <address> <rkey>}, reads the test's
 * connection info from stdin, connects, prints {@code READY} and serves until killed or stdin ends.
 */
public final class PeerMain {
  private PeerMain() {}

  /** Entry point. */
  public static void main(String[] args) throws Exception {
    int rw = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
    try (DeviceContext ctx = TestProviders.device().open(new DeviceOptions());
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionQueue cq = ctx.createCompletionQueue(64);
        QueuePair qp = pd.createQueuePair(QueuePairAttributes.of(cq, 16, 1));
        MemoryRegion mr = pd.registerMemory(ByteBuffer.allocateDirect(1 << 20), rw)) {
      qp.init(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
      HexFormat hex = HexFormat.of();
      System.out.println(
          "INFO " + hex.formatHex(qp.localInfo().encode()) + " " + mr.address() + " " + mr.rkey());
      System.out.flush();
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      String line = in.readLine();
      qp.readyToReceive(ConnectionInfo.decode(hex.parseHex(line.trim())));
      qp.readyToSend();
      System.out.println("READY");
      System.out.flush();
      while (in.readLine() != null) {
        // serve until the test closes our stdin or kills us
      }
    }
  }
}
