package io.srdma.verbs.ibv;

import java.util.List;

/**
 * One static layout per libibverbs struct (x86_64 / aarch64 LP64, rdma-core's verbs.h). Offsets are
 * written out and checked against the real header by StructLayoutTest (gcc + libibverbs-dev);
 * {@link LayoutProbe} cross-checks the ones read back from the library at run time.
 */
final class Structs {
  private Structs() {}

  /**
   * {@code struct ibv_context}: the provider's ops table (the inline verbs dispatch through it).
   */
  static final class Context {
    static final int DEVICE = 0;
    static final int OPS_ALLOC_MW = 64;
    static final int OPS_DEALLOC_MW = 80;
    static final int OPS_POLL_CQ = 96;
    static final int OPS_POST_SRQ_RECV = 168;
    static final int OPS_POST_SEND = 208;
    static final int OPS_POST_RECV = 216;
    static final CLayout LAYOUT =
        CLayout.of("ibv_context", 328)
            .field("device", DEVICE)
            .field("ops.alloc_mw", OPS_ALLOC_MW)
            .field("ops.dealloc_mw", OPS_DEALLOC_MW)
            .field("ops.poll_cq", OPS_POLL_CQ)
            .field("ops.post_srq_recv", OPS_POST_SRQ_RECV)
            .field("ops.post_send", OPS_POST_SEND)
            .field("ops.post_recv", OPS_POST_RECV);

    private Context() {}
  }

  /** {@code struct ibv_device_attr}. */
  static final class DeviceAttr {
    static final int MAX_MR_SIZE = 80;
    static final int MAX_QP = 108;
    static final int MAX_QP_WR = 112;
    static final int DEVICE_CAP_FLAGS = 116;
    static final int MAX_SGE = 120;
    static final int MAX_CQE = 132;
    static final int MAX_MR = 136;
    static final int MAX_QP_RD_ATOM = 144;
    static final int MAX_QP_INIT_RD_ATOM = 156;
    static final int MAX_MW = 176;
    static final int PHYS_PORT_CNT = 227;
    static final int SIZE = 232;
    static final CLayout LAYOUT =
        CLayout.of("ibv_device_attr", SIZE)
            .field("max_mr_size", MAX_MR_SIZE)
            .field("max_qp", MAX_QP)
            .field("max_qp_wr", MAX_QP_WR)
            .field("device_cap_flags", DEVICE_CAP_FLAGS)
            .field("max_sge", MAX_SGE)
            .field("max_cqe", MAX_CQE)
            .field("max_mr", MAX_MR)
            .field("max_qp_rd_atom", MAX_QP_RD_ATOM)
            .field("max_qp_init_rd_atom", MAX_QP_INIT_RD_ATOM)
            .field("max_mw", MAX_MW)
            .field("phys_port_cnt", PHYS_PORT_CNT);

    /** {@code IBV_DEVICE_MEM_WINDOW_TYPE_2A} and {@code _2B}. */
    static final int CAP_MW_TYPE_2 = (1 << 23) | (1 << 24);

    private DeviceAttr() {}
  }

  /** {@code struct ibv_port_attr}. */
  static final class PortAttr {
    static final int STATE = 0;
    static final int ACTIVE_MTU = 8;
    static final int GID_TBL_LEN = 12;
    static final int MAX_MSG_SZ = 20;
    static final int LID = 34;
    static final int LINK_LAYER = 46;
    static final int SIZE = 52;
    static final CLayout LAYOUT =
        CLayout.of("ibv_port_attr", SIZE)
            .field("state", STATE)
            .field("active_mtu", ACTIVE_MTU)
            .field("gid_tbl_len", GID_TBL_LEN)
            .field("max_msg_sz", MAX_MSG_SZ)
            .field("lid", LID)
            .field("link_layer", LINK_LAYER);

    private PortAttr() {}
  }

  /** {@code struct ibv_pd}. */
  static final class Pd {
    static final int CONTEXT = 0;
    static final CLayout LAYOUT = CLayout.of("ibv_pd", 16).field("context", CONTEXT);

    private Pd() {}
  }

  /** {@code struct ibv_mr}. */
  static final class Mr {
    static final int CONTEXT = 0;
    static final int PD = 8;
    static final int ADDR = 16;
    static final int LENGTH = 24;
    static final int LKEY = 36;
    static final int RKEY = 40;
    static final CLayout LAYOUT =
        CLayout.of("ibv_mr", 48)
            .field("context", CONTEXT)
            .field("pd", PD)
            .field("addr", ADDR)
            .field("length", LENGTH)
            .field("lkey", LKEY)
            .field("rkey", RKEY);

    private Mr() {}
  }

  /** {@code struct ibv_mw}. */
  static final class Mw {
    static final int PD = 8;
    static final int RKEY = 16;
    static final int TYPE = 24;
    static final CLayout LAYOUT =
        CLayout.of("ibv_mw", 32).field("pd", PD).field("rkey", RKEY).field("type", TYPE);

    /** {@code IBV_MW_TYPE_2}. */
    static final int TYPE_2 = 2;

    private Mw() {}
  }

  /** {@code struct ibv_cq}. */
  static final class Cq {
    static final int CONTEXT = 0;
    static final int CQE = 28;
    static final CLayout LAYOUT =
        CLayout.of("ibv_cq", 128).field("context", CONTEXT).field("cqe", CQE);

    private Cq() {}
  }

  /** {@code struct ibv_qp}. */
  static final class Qp {
    static final int CONTEXT = 0;
    static final int PD = 16;
    static final int QP_NUM = 52;
    static final CLayout LAYOUT =
        CLayout.of("ibv_qp", 160).field("context", CONTEXT).field("pd", PD).field("qp_num", QP_NUM);

    private Qp() {}
  }

  /** {@code struct ibv_srq}. */
  static final class Srq {
    static final int CONTEXT = 0;
    static final int PD = 16;
    static final CLayout LAYOUT =
        CLayout.of("ibv_srq", 128).field("context", CONTEXT).field("pd", PD);

    private Srq() {}
  }

  /** {@code struct ibv_srq_init_attr} with its embedded {@code ibv_srq_attr}. */
  static final class SrqInitAttr {
    static final int SRQ_CONTEXT = 0;
    static final int MAX_WR = 8;
    static final int MAX_SGE = 12;
    static final int SRQ_LIMIT = 16;
    static final int SIZE = 24;
    static final CLayout LAYOUT =
        CLayout.of("ibv_srq_init_attr", SIZE)
            .field("srq_context", SRQ_CONTEXT)
            .field("attr.max_wr", MAX_WR)
            .field("attr.max_sge", MAX_SGE)
            .field("attr.srq_limit", SRQ_LIMIT);

    private SrqInitAttr() {}
  }

  /** {@code struct ibv_sge}. */
  static final class Sge {
    static final int ADDR = 0;
    static final int LENGTH = 8;
    static final int LKEY = 12;
    static final int SIZE = 16;
    static final CLayout LAYOUT =
        CLayout.of("ibv_sge", SIZE).field("addr", ADDR).field("length", LENGTH).field("lkey", LKEY);

    private Sge() {}
  }

  /** {@code struct ibv_send_wr}. */
  static final class SendWr {
    static final int WR_ID = 0;
    static final int NEXT = 8;
    static final int SG_LIST = 16;
    static final int NUM_SGE = 24;
    static final int OPCODE = 28;
    static final int SEND_FLAGS = 32;
    static final int IMM_DATA = 36;
    static final int INVALIDATE_RKEY = 36;
    static final int RDMA_REMOTE_ADDR = 40;
    static final int RDMA_RKEY = 48;
    static final int BIND_MW = 80;
    static final int BIND_RKEY = 88;
    static final int BIND_MR = 96;
    static final int BIND_ADDR = 104;
    static final int BIND_LENGTH = 112;
    static final int BIND_ACCESS = 120;
    static final int SIZE = 128;
    static final CLayout LAYOUT =
        CLayout.of("ibv_send_wr", SIZE)
            .field("wr_id", WR_ID)
            .field("next", NEXT)
            .field("sg_list", SG_LIST)
            .field("num_sge", NUM_SGE)
            .field("opcode", OPCODE)
            .field("send_flags", SEND_FLAGS)
            .field("imm_data", IMM_DATA)
            .field("invalidate_rkey", INVALIDATE_RKEY)
            .field("wr.rdma.remote_addr", RDMA_REMOTE_ADDR)
            .field("wr.rdma.rkey", RDMA_RKEY)
            .field("bind_mw.mw", BIND_MW)
            .field("bind_mw.rkey", BIND_RKEY)
            .field("bind_mw.bind_info.mr", BIND_MR)
            .field("bind_mw.bind_info.addr", BIND_ADDR)
            .field("bind_mw.bind_info.length", BIND_LENGTH)
            .field("bind_mw.bind_info.mw_access_flags", BIND_ACCESS);

    private SendWr() {}
  }

  /** {@code struct ibv_recv_wr}. */
  static final class RecvWr {
    static final int WR_ID = 0;
    static final int NEXT = 8;
    static final int SG_LIST = 16;
    static final int NUM_SGE = 24;
    static final int SIZE = 32;
    static final CLayout LAYOUT =
        CLayout.of("ibv_recv_wr", SIZE)
            .field("wr_id", WR_ID)
            .field("next", NEXT)
            .field("sg_list", SG_LIST)
            .field("num_sge", NUM_SGE);

    private RecvWr() {}
  }

  /** {@code struct ibv_wc}. */
  static final class Wc {
    static final int WR_ID = 0;
    static final int STATUS = 8;
    static final int OPCODE = 12;
    static final int BYTE_LEN = 20;
    static final int IMM_DATA = 24;
    static final int QP_NUM = 28;
    static final int WC_FLAGS = 36;
    static final int SIZE = 48;
    static final CLayout LAYOUT =
        CLayout.of("ibv_wc", SIZE)
            .field("wr_id", WR_ID)
            .field("status", STATUS)
            .field("opcode", OPCODE)
            .field("byte_len", BYTE_LEN)
            .field("imm_data", IMM_DATA)
            .field("qp_num", QP_NUM)
            .field("wc_flags", WC_FLAGS);

    /** {@code IBV_WC_WITH_IMM}. */
    static final int WITH_IMM = 1 << 1;

    private Wc() {}
  }

  /** {@code struct ibv_qp_init_attr}. */
  static final class QpInitAttr {
    static final int SEND_CQ = 8;
    static final int RECV_CQ = 16;
    static final int SRQ = 24;
    static final int MAX_SEND_WR = 32;
    static final int MAX_RECV_WR = 36;
    static final int MAX_SEND_SGE = 40;
    static final int MAX_RECV_SGE = 44;
    static final int QP_TYPE = 52;
    static final int SQ_SIG_ALL = 56;
    static final int SIZE = 64;
    static final CLayout LAYOUT =
        CLayout.of("ibv_qp_init_attr", SIZE)
            .field("send_cq", SEND_CQ)
            .field("recv_cq", RECV_CQ)
            .field("srq", SRQ)
            .field("cap.max_send_wr", MAX_SEND_WR)
            .field("cap.max_recv_wr", MAX_RECV_WR)
            .field("cap.max_send_sge", MAX_SEND_SGE)
            .field("cap.max_recv_sge", MAX_RECV_SGE)
            .field("qp_type", QP_TYPE)
            .field("sq_sig_all", SQ_SIG_ALL);

    /** {@code IBV_QPT_RC}. */
    static final int QPT_RC = 2;

    private QpInitAttr() {}
  }

  /**
   * {@code struct ibv_qp_attr} with its embedded {@code ibv_ah_attr} and {@code ibv_global_route}.
   */
  static final class QpAttr {
    static final int QP_STATE = 0;
    static final int PATH_MTU = 8;
    static final int RQ_PSN = 20;
    static final int SQ_PSN = 24;
    static final int DEST_QP_NUM = 28;
    static final int QP_ACCESS_FLAGS = 32;
    static final int AH_DGID = 56;
    static final int AH_SGID_INDEX = 76;
    static final int AH_HOP_LIMIT = 77;
    static final int AH_DLID = 80;
    static final int AH_SL = 82;
    static final int AH_IS_GLOBAL = 85;
    static final int AH_PORT_NUM = 86;
    static final int PKEY_INDEX = 120;
    static final int MAX_RD_ATOMIC = 126;
    static final int MAX_DEST_RD_ATOMIC = 127;
    static final int MIN_RNR_TIMER = 128;
    static final int PORT_NUM = 129;
    static final int TIMEOUT = 130;
    static final int RETRY_CNT = 131;
    static final int RNR_RETRY = 132;
    static final int SIZE = 144;
    static final CLayout LAYOUT =
        CLayout.of("ibv_qp_attr", SIZE)
            .field("qp_state", QP_STATE)
            .field("path_mtu", PATH_MTU)
            .field("rq_psn", RQ_PSN)
            .field("sq_psn", SQ_PSN)
            .field("dest_qp_num", DEST_QP_NUM)
            .field("qp_access_flags", QP_ACCESS_FLAGS)
            .field("ah_attr.grh.dgid", AH_DGID)
            .field("ah_attr.grh.sgid_index", AH_SGID_INDEX)
            .field("ah_attr.grh.hop_limit", AH_HOP_LIMIT)
            .field("ah_attr.dlid", AH_DLID)
            .field("ah_attr.sl", AH_SL)
            .field("ah_attr.is_global", AH_IS_GLOBAL)
            .field("ah_attr.port_num", AH_PORT_NUM)
            .field("pkey_index", PKEY_INDEX)
            .field("max_rd_atomic", MAX_RD_ATOMIC)
            .field("max_dest_rd_atomic", MAX_DEST_RD_ATOMIC)
            .field("min_rnr_timer", MIN_RNR_TIMER)
            .field("port_num", PORT_NUM)
            .field("timeout", TIMEOUT)
            .field("retry_cnt", RETRY_CNT)
            .field("rnr_retry", RNR_RETRY);

    private QpAttr() {}
  }

  /** {@code union ibv_gid}: 16 raw bytes. */
  static final int GID_SIZE = 16;

  /** Every layout, for the header check. */
  static final List<CLayout> ALL =
      List.of(
          Context.LAYOUT,
          DeviceAttr.LAYOUT,
          PortAttr.LAYOUT,
          Pd.LAYOUT,
          Mr.LAYOUT,
          Mw.LAYOUT,
          Cq.LAYOUT,
          Qp.LAYOUT,
          Srq.LAYOUT,
          SrqInitAttr.LAYOUT,
          Sge.LAYOUT,
          SendWr.LAYOUT,
          RecvWr.LAYOUT,
          Wc.LAYOUT,
          QpInitAttr.LAYOUT,
          QpAttr.LAYOUT);
}
