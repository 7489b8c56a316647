package io.srdma.cli;

import java.io.FileNotFoundException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;

/** Addresses and causes in the words a person reads, without Java class names. */
final class Addresses {
  private Addresses() {}

  /** {@code host:port}, or {@code [v6-address]:port}; never the JDK's {@code /1.2.3.4:5}. */
  static String format(InetSocketAddress address) {
    String host = address.getHostString();
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
  }

  /**
   * The deepest cause of a failure in plain words: "connection refused", "no such file: x",
   * "permission denied: x", "address already in use", "timed out", else its message.
   */
  static String plainCause(Throwable failure) {
    String fallback = failure.getMessage();
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ConnectException) {
        return "connection refused";
      }
      if (t instanceof NoRouteToHostException) {
        return "no route to host";
      }
      if (t instanceof UnknownHostException) {
        return "unknown host " + t.getMessage();
      }
      if (t instanceof SocketTimeoutException) {
        return "timed out";
      }
      if (t instanceof BindException) {
        return "address already in use";
      }
      if (t instanceof NoSuchFileException || t instanceof FileNotFoundException) {
        return "no such file: " + t.getMessage();
      }
      if (t instanceof AccessDeniedException) {
        return "permission denied: " + t.getMessage();
      }
    }
    return fallback == null ? "unknown failure" : withoutClassNames(fallback);
  }

  private static final java.util.regex.Pattern CLASS_NAME =
      java.util.regex.Pattern.compile(
          "\\b(?:[a-z][a-z0-9_]*\\.)*[A-Z]\\w*(?:Exception|Error):\\s*");
  private static final java.util.regex.Pattern SLASH_ADDRESS =
      java.util.regex.Pattern.compile("(?<![\\w.])/(\\d{1,3}(?:\\.\\d{1,3}){3}:\\d+)");

  /** A message without Java exception class names and with {@code host:port} addresses. */
  static String withoutClassNames(String message) {
    return SLASH_ADDRESS.matcher(CLASS_NAME.matcher(message).replaceAll("")).replaceAll("$1");
  }
}
