package io.srdma.channel;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.srdma.verbs.ConnectionInfo;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The client's check of the responder address a host names in HELLO_ACK, from the bytes alone. */
class HostResponderAddressTest {
  private static ConnectionInfo at(String ip, int port) throws Exception {
    byte[] a = InetAddress.getByName(ip).getAddress();
    byte[] address = ByteBuffer.allocate(a.length + 2).put(a).putShort((short) port).array();
    return new ConnectionInfo(0x11, 0x22, address);
  }

  private static HostResponderAddress soft(String host, String... allowed) throws Exception {
    Set<InetAddress> a = new java.util.HashSet<>();
    for (String s : allowed) {
      a.add(InetAddress.getByName(s));
    }
    return new HostResponderAddress("soft", a, InetAddress.getByName(host));
  }

  @Test
  void shouldAcceptTheHostsOwnAddressOnAnyPort() throws Exception {
    assertNull(soft("10.1.2.3").refusal(at("10.1.2.3", 40000)));
    assertNull(soft("127.0.0.1").refusal(at("127.0.0.1", 1)));
    assertNull(soft("fd00::5").refusal(at("fd00::5", 7)));
  }

  @Test
  void shouldTreatBothLoopbackAddressesAsOneMachineButNoOtherLoopbackAddress() throws Exception {
    assertNull(soft("::1").refusal(at("127.0.0.1", 5000)));
    assertNull(soft("127.0.0.1").refusal(at("::1", 5000)));
    assertNotNull(soft("127.0.0.1").refusal(at("127.0.0.2", 5000)));
  }

  @Test
  void shouldRefuseAnyOtherAddressNamingItUnlessAllowed() throws Exception {
    String why = soft("10.1.2.3").refusal(at("169.254.169.254", 80));
    assertNotNull(why);
    assertTrue(why.contains("169.254.169.254") && why.contains("port 80"), why);
    assertTrue(why.contains("10.1.2.3") && why.contains("allowedResponderAddresses"), why);
    assertNotNull(soft("10.1.2.3").refusal(at("0.0.0.0", 5000)), "the wildcard is this machine");
    assertNotNull(soft("127.0.0.1").refusal(at("10.1.2.3", 5000)));
    assertNull(soft("192.0.2.1", "10.1.2.3").refusal(at("10.1.2.3", 5000)), "behind NAT");
  }

  @Test
  void shouldRefuseWhatIsNoSoftAddressAndLeaveOtherProvidersAlone() throws Exception {
    assertNotNull(
        soft("127.0.0.1").refusal(new ConnectionInfo(1, 1, new byte[16])), "not ip and port");
    HostResponderAddress ibv =
        new HostResponderAddress("ibv", Set.of(), InetAddress.getByName("127.0.0.1"));
    assertNull(ibv.refusal(new ConnectionInfo(1, 1, new byte[22])), "a GID, LID and port");
  }
}
