package io.srdma.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The rules that keep a revocation made in etcd from being lost: every way a grant's key can be
 * deleted while the host writes it, loses the answer, or does not watch.
 */
class GrantLedgerTest {
  private final GrantLedger ledger = new GrantLedger();

  private static List<Long> ids(List<GrantLedger.Revoke> revokes) {
    return revokes.stream().map(GrantLedger.Revoke::grantId).toList();
  }

  @Test
  void shouldRevokeAWrittenKeyThatAReadNoLongerLists() {
    ledger.writing(5);
    assertTrue(ledger.tracked(5));
    assertNull(ledger.written(5, 100, 10));
    assertTrue(ledger.tracked(5));
    assertEquals(List.of(5L), ids(ledger.read(Map.of(), 12)));
    assertFalse(ledger.tracked(5), "forgotten once revoked");
    assertEquals(List.of(), ledger.read(Map.of(), 13), "revoked once");
  }

  @Test
  void shouldKeepAKeyWrittenAfterTheRevisionARead() {
    // the read ran at 12, its result reached the apply thread after the write's answer at 15
    ledger.writing(5);
    assertNull(ledger.written(5, 100, 15));
    assertEquals(List.of(), ledger.read(Map.of(), 12));
    assertTrue(ledger.tracked(5));
    assertEquals(List.of(5L), ids(ledger.read(Map.of(), 16)), "a later read without it revokes");
  }

  @Test
  void shouldRevokeAWriteAnsweredAfterAReadThatDidNotListIt() {
    // written at 10, deleted at 11, read at 11, and only then the write's answer came
    ledger.writing(5);
    assertEquals(List.of(), ledger.read(Map.of(), 11));
    GrantLedger.Revoke r = ledger.written(5, 100, 10);
    assertNotNull(r);
    assertEquals(5, r.grantId());
    assertFalse(ledger.tracked(5));
  }

  @Test
  void shouldKeepAWriteAnsweredAfterAReadThatListedIt() {
    ledger.writing(5);
    ledger.read(Map.of(5L, new GrantLedger.Written(100, 10)), 11);
    assertNull(ledger.written(5, 100, 10));
    assertNull(ledger.written(6, 101, 12), "written after the read");
  }

  @Test
  void shouldSettleALostWriteByTheNextRead() {
    ledger.writing(5);
    ledger.lost(5, 100);
    assertTrue(ledger.tracked(5), "not published again while its fate is open");
    // listed under the lease it was sent with: it was written
    assertEquals(List.of(), ledger.read(Map.of(5L, new GrantLedger.Written(100, 10)), 11));
    assertTrue(ledger.tracked(5));
    assertEquals(Map.of(5L, 100L), ledger.toWithdraw(Set.of()), "its lease is known");
  }

  @Test
  void shouldRevokeALostWriteThatTheNextReadDoesNotList() {
    ledger.writing(5);
    ledger.lost(5, 100);
    ledger.writing(6);
    ledger.lost(6, 101);
    // 6 is listed, but under another lease: an earlier key of that id, not this write
    List<GrantLedger.Revoke> r = ledger.read(Map.of(6L, new GrantLedger.Written(77, 3)), 11);
    assertEquals(Set.of(5L, 6L), Set.copyOf(ids(r)));
    assertFalse(ledger.tracked(5));
    assertFalse(ledger.tracked(6));
  }

  @Test
  void shouldRevokeOnADeletionUnlessItIsOlderThanTheHostsWrite() {
    ledger.writing(5);
    assertNull(ledger.written(5, 100, 10));
    assertFalse(ledger.deleted(5, 9), "an earlier key of the same id");
    assertTrue(ledger.tracked(5));
    assertTrue(ledger.deleted(5, 11));
    assertFalse(ledger.tracked(5));
    ledger.writing(6);
    assertTrue(ledger.deleted(6, 20), "deleted while being written: fail closed");
    ledger.writing(7);
    ledger.lost(7, 102);
    assertTrue(ledger.deleted(7, 1));
    assertTrue(ledger.deleted(8, 1), "unknown: the host's revoke decides (nothing live)");
  }

  @Test
  void shouldWithdrawEachEndedGrantOnceAndRetryAFailure() {
    ledger.writing(5);
    ledger.written(5, 100, 10);
    ledger.writing(6);
    ledger.written(6, 101, 11);
    ledger.writing(7);
    ledger.lost(7, 102);
    assertEquals(Map.of(5L, 100L, 7L, 102L), ledger.toWithdraw(Set.of(6L)));
    assertEquals(Map.of(), ledger.toWithdraw(Set.of(6L)), "in flight: not asked twice");
    ledger.withdrawFailed(5);
    ledger.withdrawn(7);
    assertFalse(ledger.tracked(7));
    assertEquals(Map.of(5L, 100L), ledger.toWithdraw(Set.of(6L)), "a failed withdrawal again");
    ledger.withdrawn(5);
    assertEquals(Map.of(), ledger.toWithdraw(Set.of(6L)));
    assertEquals(List.of(101L), ledger.withdrawAll());
    assertFalse(ledger.tracked(6));
  }

  @Test
  void shouldPublishAgainAfterARefusal() {
    ledger.writing(5);
    ledger.refused(5);
    assertFalse(ledger.tracked(5));
  }
}
