package io.srdma.verbs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The copy-on-write queue-pair-number table client lanes and host openers dispatch by. */
class QpnTableTest {
  private static Object target(String name) {
    return new StringBuilder(name); // identity matters, not equality
  }

  @Test
  void shouldFindWhatWasAddedAndForgetWhatWasRemoved() {
    Random random = new Random(17);
    Map<Integer, Object> expected = new HashMap<>();
    QpnTable<Object> t = QpnTable.empty();
    for (int round = 0; round < 2_000; round++) {
      int qpn = random.nextInt(300); // consecutive-ish numbers, as providers hand them out
      if (random.nextInt(3) == 0) {
        t = t.without(qpn);
        expected.remove(qpn);
      } else {
        Object c = target("c" + round);
        t = t.with(qpn, c);
        expected.put(qpn, c);
      }
      assertEquals(expected.size(), t.size());
    }
    for (int qpn = -5; qpn < 310; qpn++) {
      assertSame(expected.get(qpn), t.get(qpn), "qpn " + qpn);
    }
    assertEquals(expected.size(), t.values().size());
  }

  @Test
  void shouldLeaveTheOldTableAsItWas() {
    Object a = target("a");
    QpnTable<Object> one = QpnTable.empty().with(7, a);
    QpnTable<Object> two = one.with(8, target("b"));
    QpnTable<Object> none = two.without(7).without(8);
    assertSame(a, one.get(7));
    assertNull(one.get(8));
    assertSame(a, two.get(7));
    assertNull(none.get(7));
    assertEquals(0, none.size());
    assertNull(QpnTable.empty().get(7));
    assertSame(none, none.without(99), "removing what is not there copies nothing");
  }
}
