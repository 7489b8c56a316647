package io.srdma.channel.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/protocol.md's message table says what {@link MessageType} does. */
class ProtocolDocTest {
  private static final Pattern ROW =
      Pattern.compile(
          "^\\| 0x([0-9A-F]{2}) \\| (\\w+) \\| (client|server|both) \\| ([^|]+) \\| ([0-9.]+) \\|$",
          Pattern.MULTILINE);

  @Test
  void shouldDocumentEveryMessageTypeAsCoded() throws IOException {
    String doc = Files.readString(Path.of("..", "docs", "protocol.md"), StandardCharsets.UTF_8);
    Matcher m = ROW.matcher(doc);
    Set<MessageType> seen = EnumSet.noneOf(MessageType.class);
    while (m.find()) {
      MessageType t = MessageType.valueOf(m.group(2));
      seen.add(t);
      assertEquals(t.code(), Integer.parseInt(m.group(1), 16), t + " code");
      String side = m.group(3);
      assertEquals(!side.equals("server"), t.sentBy(Side.CLIENT), t + " client");
      assertEquals(!side.equals("client"), t.sentBy(Side.SERVER), t + " server");
      assertEquals(
          t.needsRequestId(),
          m.group(4).toLowerCase(Locale.ROOT).startsWith("required"),
          t + " id");
      String bounds =
          t.minBodyLength() == t.maxBodyLength()
              ? Integer.toString(t.minBodyLength())
              : t.minBodyLength() + ".." + t.maxBodyLength();
      assertEquals(bounds, m.group(5), t + " body bytes");
    }
    assertEquals(EnumSet.allOf(MessageType.class), seen);
    assertTrue(doc.contains("(" + (16 + MessageType.largestBodyLength()) + " bytes)"));
  }
}
