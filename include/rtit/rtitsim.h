/*
 * rtitsim.h - the umbrella header of the decoding library (pkg-config
 * rtitsim-decode): packets of both dialects (encode, decode, print), the
 * record format and the ground-truth flow files, the sideband, the program
 * image, the instruction-flow decoder and its comparator.  No simulator
 * needed.
 *
 * The simulator and the encoder models (pkg-config rtitsim) add
 * rtit/sim.h, rtit/scenario.h, rtit/encoder.h (rtit_encoder.h,
 * pt_encoder.h), rtit/session.h, rtit/bundle.h and rtit/perfdata.h.
 */
#ifndef RTIT_RTITSIM_H
#define RTIT_RTITSIM_H

#include "rtit/version.h"
#include "rtit/error.h"
#include "rtit/bits.h"
#include "rtit/opcodes_rtit.h"
#include "rtit/opcodes_pt.h"
#include "rtit/msr_rtit.h"
#include "rtit/msr_pt.h"
#include "rtit/packet.h"
#include "rtit/ip.h"
#include "rtit/pktdec.h"
#include "rtit/print.h"
#include "rtit/pebs.h"
#include "rtit/record.h"
#include "rtit/sideband.h"
#include "rtit/image.h"
#include "rtit/flow.h"

#endif /* RTIT_RTITSIM_H */
