package io.srdma.server;

import java.io.FileNotFoundException;
import java.net.BindException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.Locale;
import java.util.regex.Pattern;

/** Addresses and causes in the words a person reads, without Java class names. */
public final class Addresses {
  private Addresses() {}

  /** {@code host:port}, or {@code [v6-address]:port}; never the JDK's {@code /1.2.3.4:5}. */
  public static String format(InetSocketAddress address) {
    String host = address.getHostString();
    if (host.indexOf(':') < 0) {
      return host + ":" + address.getPort();
    }
    int zone = host.indexOf('%');
    String literal = zone < 0 ? host : host.substring(0, zone);
    return "["
        + compressed(literal)
        + (zone < 0 ? "" : host.substring(zone))
        + "]:"
        + address.getPort();
  }

  /** An IPv6 literal in its short form ({@code 0:0:0:0:0:0:0:1} as {@code ::1}, RFC 5952). */
  public static String compressed(String v6) {
    if (v6.contains("::") || v6.split(":", -1).length != 8) {
      return v6;
    }
    String[] groups = v6.split(":", -1);
    int bestStart = -1;
    int bestLength = 1;
    for (int i = 0; i < groups.length; ) {
      int j = i;
      while (j < groups.length && groups[j].matches("0+")) {
        j++;
      }
      if (j - i > bestLength) {
        bestStart = i;
        bestLength = j - i;
      }
      i = j == i ? i + 1 : j;
    }
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < groups.length; i++) {
      if (i == bestStart) {
        b.append(i == 0 ? "::" : ":");
        i += bestLength - 1;
        continue;
      }
      b.append(groups[i].replaceFirst("^0+(?=.)", ""));
      if (i < groups.length - 1) {
        b.append(':');
      }
    }
    return b.toString();
  }

  /**
   * A failure as one line for people: its own message (without Java class names and type prefixes)
   * followed by its deepest cause in plain words where the message does not already say it, e.g.
   * "cannot listen on 127.0.0.1:47853: address already in use".
   */
  public static String explain(Throwable failure) {
    String top = ownWords(failure);
    String reason = null;
    Throwable named = null;
    for (Throwable t = failure; t != null && reason == null; t = t.getCause()) {
      reason = plainReason(t);
      named = t;
    }
    if (reason == null) {
      return top == null || top.isBlank() ? "unknown failure" : top;
    }
    String bare = withoutClassNames(named.getMessage() == null ? "" : named.getMessage());
    if (top == null || top.isBlank() || top.equals(bare)) {
      return reason;
    }
    // a file-system exception's message is often just its file: "cannot create /x: /x"
    String file = named instanceof FileSystemException f ? f.getFile() : null;
    if (file != null && top.endsWith(": " + file)) {
      top = top.substring(0, top.length() - file.length() - 2);
    }
    if (!bare.isEmpty() && top.endsWith(": " + bare)) {
      top = top.substring(0, top.length() - bare.length() - 2);
    }
    String lower = top.toLowerCase(Locale.ROOT);
    return lower.contains(reason.toLowerCase(Locale.ROOT))
            || (reason.startsWith("no such file") && lower.contains("does not exist"))
        ? top
        : top + ": " + reason;
  }

  /** The message of {@code t} without a type prefix such as {@code IO_ERROR: }. */
  private static String ownWords(Throwable t) {
    String m = t.getMessage();
    if (m == null) {
      return null;
    }
    m = withoutClassNames(m);
    if (t instanceof io.srdma.keys.KeyExchangeException k) {
      m = m.replaceFirst("^" + k.reason() + ": ", "");
    } else if (t instanceof io.srdma.verbs.VerbsException v) {
      m = m.replaceFirst("^" + Pattern.quote(v.verb()) + ": ", "");
    }
    // a reason code in front (CONNECT_FAILED: ..., IO_ERROR: ...) is for logs, not for people
    return m.replaceFirst("^[A-Z][A-Z0-9_]{2,}: ", "");
  }

  /** What went wrong in plain words for the failures a person can fix, else null. */
  public static String plainReason(Throwable t) {
    if (t instanceof BindException) {
      return "address already in use";
    }
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
    if (t instanceof NoSuchFileException || t instanceof FileNotFoundException) {
      return "no such file or directory";
    }
    if (t instanceof AccessDeniedException) {
      return "permission denied";
    }
    if (t instanceof FileAlreadyExistsException) {
      return "already exists";
    }
    if (t instanceof NotDirectoryException) {
      return "not a directory";
    }
    if (t instanceof FileSystemException f && f.getReason() != null) {
      return f.getReason().toLowerCase(Locale.ROOT);
    }
    return null;
  }

  /**
   * The deepest cause of a failure in plain words: "connection refused", "no such file: x",
   * "permission denied: x", "address already in use", "timed out", else its message.
   */
  public static String plainCause(Throwable failure) {
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
  public static String withoutClassNames(String message) {
    return SLASH_ADDRESS.matcher(CLASS_NAME.matcher(message).replaceAll("")).replaceAll("$1");
  }
}
