package io.srdma.verbs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CpuSetTest {
  @Test
  void parsesLinuxCpuListsAndWritesThemBackCanonically() {
    assertEquals("0", CpuSet.parse("0").toString());
    assertEquals("0-3,6", CpuSet.parse("3, 0-2 ,6").toString());
    assertEquals("1,3", CpuSet.parse("3,1,3").toString());
    assertEquals("1023", CpuSet.parse("1023").toString());
    assertArrayEquals(new int[] {0, 2, 4, 5}, CpuSet.parse("0,2,4-5").toArray());
    assertEquals(CpuSet.of(4, 5, 6), CpuSet.parse("4-6"));
    assertEquals(3, CpuSet.parse("4-6").size());
    assertTrue(CpuSet.parse("4-6").contains(5));
    assertFalse(CpuSet.parse("4-6").contains(3));
    assertFalse(CpuSet.parse("4-6").contains(-1));
  }

  @Test
  void refusesWhatIsNotACpuListNamingIt() {
    for (String bad :
        new String[] {
          "", " ", "a", "1,", ",1", "1--2", "-1", "3-1", "1024", "0-1024", "99999", "0x1", "1.5",
          "+1"
        }) {
      IllegalArgumentException e =
          assertThrows(IllegalArgumentException.class, () -> CpuSet.parse(bad), "'" + bad + "'");
      assertTrue(e.getMessage().contains("CPU"), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> CpuSet.parse(null));
    assertThrows(IllegalArgumentException.class, CpuSet::of);
    assertThrows(IllegalArgumentException.class, () -> CpuSet.of(-1));
    assertThrows(IllegalArgumentException.class, () -> CpuSet.of(1024));
  }

  @Test
  void masksAreCpuSetTLayout() {
    long[] m = CpuSet.parse("0,63,64,1023").mask(16);
    assertEquals(16, m.length);
    assertEquals(1L | (1L << 63), m[0]);
    assertEquals(1L, m[1]);
    assertEquals(1L << 63, m[15]);
    assertEquals(CpuSet.parse("0,63,64,1023"), CpuSet.fromMask(m));
    assertEquals(null, CpuSet.fromMask(new long[16]));
  }
}
