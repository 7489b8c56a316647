package io.srdma.bench.transport;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * This process's file descriptors, each attributed to the host side, the client side or neither,
 * for a {@link LoadRun} whose host and clients share the process.
 *
 * <p>How: every {@code /proc/self/fd} entry that is a {@code socket:[inode]} is looked up in {@code
 * /proc/net/tcp} and {@code /proc/net/tcp6} by inode. The host's listening ports are those that
 * listened once the host had started and before any client existed (its control listener and its
 * soft device's responder listener); listening ports that were open before the host started belong
 * to neither. Then a listening socket belongs to whoever owns its port; a connected socket whose
 * local port is a listening port belongs to that port's owner (it was accepted there); otherwise,
 * whose remote port is a host port belongs to the client side (a client connected to the host),
 * whose remote port is a client's listening port to the host side (the host connected to a client).
 * Everything else (selectors' epoll and eventfd descriptors, pipes, files, sockets found in neither
 * table) is {@code other}: a {@link LoadRun} counts the growth of {@code other} against the client
 * side, which is conservative for the clients and right for the host, whose selectors are a fixed
 * number opened at start.
 *
 * <p>Thread safety: immutable.
 */
public record FdCensus(int host, int client, int other) {
  private static final int TCP_LISTEN = 0x0A;

  /** One row of {@code /proc/net/tcp{,6}}. */
  record Tcp(int localPort, int remotePort, boolean listening) {}

  public int total() {
    return host + client + other;
  }

  /** Parses {@code /proc/net/tcp} or {@code tcp6} text into rows by inode (the header skipped). */
  static Map<Long, Tcp> parseTcp(List<String> lines, Map<Long, Tcp> into) {
    for (String line : lines) {
      String[] f = line.trim().split("\\s+");
      if (f.length < 10 || !f[0].endsWith(":")) {
        continue; // the header, or a line not understood
      }
      try {
        int local = port(f[1]);
        int remote = port(f[2]);
        boolean listening = Integer.parseInt(f[3], 16) == TCP_LISTEN;
        long inode = Long.parseLong(f[9]);
        if (inode != 0) {
          into.put(inode, new Tcp(local, remote, listening));
        }
      } catch (NumberFormatException e) {
        // a line not understood: its socket stays "other"
      }
    }
    return into;
  }

  private static int port(String address) {
    return Integer.parseInt(address.substring(address.indexOf(':') + 1), 16);
  }

  /** The inode of a {@code socket:[N]} link target, or -1. */
  static long socketInode(String target) {
    if (!target.startsWith("socket:[") || !target.endsWith("]")) {
      return -1;
    }
    try {
      return Long.parseLong(target.substring(8, target.length() - 1));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The ports of the listening sockets among {@code targets}. */
  static Set<Integer> listeningPorts(List<String> targets, Map<Long, Tcp> tcp) {
    Set<Integer> out = new HashSet<>();
    for (String t : targets) {
      Tcp s = tcp.get(socketInode(t));
      if (s != null && s.listening()) {
        out.add(s.localPort());
      }
    }
    return out;
  }

  /**
   * Attributes descriptors (their link targets) as the class comment says.
   *
   * @param hostPorts the host's listening ports
   * @param neitherPorts listening ports of neither side (open before the host started)
   */
  static FdCensus classify(
      List<String> targets, Map<Long, Tcp> tcp, Set<Integer> hostPorts, Set<Integer> neitherPorts) {
    Set<Integer> clientPorts = new HashSet<>(listeningPorts(targets, tcp));
    clientPorts.removeAll(hostPorts);
    clientPorts.removeAll(neitherPorts);
    int host = 0;
    int client = 0;
    int other = 0;
    for (String t : targets) {
      Tcp s = tcp.get(socketInode(t));
      Boolean isHost = s == null ? null : side(s, hostPorts, clientPorts);
      if (isHost == null) {
        other++;
      } else if (isHost) {
        host++;
      } else {
        client++;
      }
    }
    return new FdCensus(host, client, other);
  }

  /** True for the host side, false for the client side, null for neither. */
  private static Boolean side(Tcp s, Set<Integer> hostPorts, Set<Integer> clientPorts) {
    if (hostPorts.contains(s.localPort())) {
      return true;
    }
    if (clientPorts.contains(s.localPort())) {
      return false;
    }
    if (s.listening()) {
      return null;
    }
    if (hostPorts.contains(s.remotePort())) {
      return false;
    }
    if (clientPorts.contains(s.remotePort())) {
      return true;
    }
    return null;
  }

  /** The link targets of this process's descriptors; empty where there is no {@code /proc}. */
  static List<String> targets() {
    List<String> out = new ArrayList<>();
    Path fd = Path.of("/proc/self/fd");
    if (!Files.isDirectory(fd)) {
      return out;
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(fd)) {
      for (Path p : s) {
        try {
          out.add(Files.readSymbolicLink(p).toString());
        } catch (IOException e) {
          // closed meanwhile (the listing's own descriptor among them)
        }
      }
    } catch (IOException e) {
      return List.of();
    }
    return out;
  }

  /** The TCP sockets of this network namespace by inode; empty where there is no {@code /proc}. */
  static Map<Long, Tcp> tcp() {
    Map<Long, Tcp> out = new HashMap<>();
    for (String f : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
      try {
        parseTcp(Files.readAllLines(Path.of(f)), out);
      } catch (IOException e) {
        // no IPv6, or no /proc: those sockets stay "other"
      }
    }
    return out;
  }

  /** This process's descriptors now, attributed (see the class comment). */
  static FdCensus take(Set<Integer> hostPorts, Set<Integer> neitherPorts) {
    // the table after the descriptors: a socket opened in between is "other" rather than missed
    List<String> targets = targets();
    return classify(targets, tcp(), hostPorts, neitherPorts);
  }

  /** The listening ports of this process now. */
  static Set<Integer> listeningPortsNow() {
    return listeningPorts(targets(), tcp());
  }
}
