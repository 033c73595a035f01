package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/podhost/podhost/bench/internal/stats"
)

// goal is the volume manager's budget at p50.
const goal = 50 * time.Millisecond

func (r *startRounds) table() string {
	var b strings.Builder
	plain, volume, driver := stats.Summarize(r.plain), stats.Summarize(r.volume), stats.Summarize(r.driver)
	perRound := make([]time.Duration, len(r.plain))
	for i := range r.plain {
		perRound[i] = r.volume[i] - r.plain[i] - r.driver[i]
	}
	added := stats.Summarize(perRound)
	fmt.Fprintf(&b, "Start, %d rounds, one pod at a time, each volume fresh (formatted at its first stage):\n\n", len(r.plain))
	fmt.Fprintf(&b, "| measure | p50 / p75 / p90 / p99 (ms) |\n|---|---|\n")
	fmt.Fprintf(&b, "| pod without volumes: apply → Running | %s |\n", plain.Quartet())
	fmt.Fprintf(&b, "| pod with one CSI volume: apply → Running | %s |\n", volume.Quartet())
	fmt.Fprintf(&b, "| driver alone: NodeStageVolume + NodePublishVolume | %s |\n", driver.Quartet())
	fmt.Fprintf(&b, "| per round: volume − plain − driver | %s |\n", added.Quartet())
	cost := volume.P50 - plain.P50 - driver.P50
	fmt.Fprintf(&b, "\nThe volume manager adds %s at p50 (p50 of volume − p50 of plain − p50 of driver; per round %s): goal under %s: %s.\n",
		stats.MS(cost), stats.MS(added.P50), stats.MS(goal), verdict(cost < goal && added.P50 < goal))
	return b.String()
}
