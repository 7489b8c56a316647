package io.srdma.verbs.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class KeyTableTest {
  @Test
  void shouldFindEveryLiveKeyAcrossGrowthAndRandomRemovals() {
    KeyTable<Object> table = new KeyTable<>(new SecureRandom(), 0xFFF);
    Map<Integer, Object> model = new HashMap<>();
    Random r = new Random(1);
    List<Integer> live = new ArrayList<>();
    for (int round = 0; round < 20_000; round++) {
      if (live.isEmpty() || (live.size() < 3000 && r.nextInt(3) > 0)) {
        Object v = new Object();
        int k = table.allocate(v);
        assertTrue(k != 0 && (k & ~0xFFF) == 0, "key outside mask: " + k);
        assertNull(model.put(k, v), "allocated a live key twice");
        live.add(k);
      } else {
        int k = live.remove(r.nextInt(live.size()));
        assertFalse(table.remove(k, new Object()), "removed under the wrong value");
        assertTrue(table.remove(k, model.remove(k)));
      }
      if (round % 997 == 0) {
        for (Map.Entry<Integer, Object> e : model.entrySet()) {
          assertSame(e.getValue(), table.get(e.getKey()));
        }
      }
    }
    assertEquals(model.size(), table.size());
    for (int k = 1; k <= 0xFFF; k++) {
      assertSame(model.get(k), table.get(k));
    }
  }
}
