package io.srdma.host;

import io.srdma.channel.ClientOptions;
import io.srdma.channel.SecureRdmaClient;
import io.srdma.keys.DeploymentCa;
import io.srdma.keys.PeerIdentity;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The client side of {@link HostMemoryFootprintTest}, in a JVM of its own so that the test's JVM
 * holds the host side only. Arguments: the CA directory, the host's port, the number of clients,
 * the provider. Connects one client, prints {@code WARM}, waits for a line, connects the rest,
 * prints {@code READY}, and closes them all when its standard input ends.
 */
final class FootprintClients {
  private FootprintClients() {}

  public static void main(String[] args) throws Exception {
    DeploymentCa ca = DeploymentCa.open(Path.of(args[0]), null);
    int port = Integer.parseInt(args[1]);
    int count = Integer.parseInt(args[2]);
    String provider = args.length > 3 ? args[3] : "soft";
    List<SecureRdmaClient> clients = new ArrayList<>();
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    try {
      for (int i = 0; i < count; i++) {
        ClientOptions o =
            new ClientOptions()
                .credential(
                    ca.issuePeer(PeerIdentity.of("acme", "footprint-" + i), Duration.ofDays(1)))
                .trust(ca.trust())
                .host(new InetSocketAddress("127.0.0.1", port))
                .hostName("host-1")
                .provider(provider)
                .maxReadBytes(4096)
                .connectTimeout(Duration.ofSeconds(30))
                .requestTimeout(Duration.ofSeconds(30));
        clients.add(SecureRdmaClient.connect(o));
        if (i == 0) {
          System.out.println("WARM");
          System.out.flush();
          if (in.readLine() == null) {
            return;
          }
        }
      }
      System.out.println("READY " + clients.size());
      System.out.flush();
      while (in.readLine() != null) {
        // wait for the test to close our input
      }
    } finally {
      for (SecureRdmaClient c : clients) {
        c.close();
      }
    }
  }
}
