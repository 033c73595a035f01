package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/podhost/podhost/host/localapi"
)

// The tables of the read commands: what -o table, wide and name show.

func podTable(pods ...localapi.PodSummary) table {
	t := table{
		header:     []string{"NAMESPACE/NAME", "PHASE", "READY", "RESTARTS", "AGE", "REASON"},
		wideHeader: []string{"UID", "SOURCE"},
	}
	for _, p := range pods {
		name := p.Namespace + "/" + p.Name
		t.rows = append(t.rows, tableRow{
			name: name,
			cells: []string{name, p.Phase, fmt.Sprintf("%d/%d", p.ReadyContainers, p.Containers),
				strconv.Itoa(int(p.Restarts)), age(p.Created), orDash(podReason(p))},
			wide: []string{orDash(p.UID), orDash(p.Source)},
		})
	}
	return t
}

// podReason is the REASON column: the pod's error first, for it is why the
// pod does not run as written.
func podReason(p localapi.PodSummary) string {
	if p.Error != "" {
		return oneLine(p.Error)
	}
	return p.Reason
}

func pluginTable(plugins []localapi.PluginInfo) table {
	t := table{
		header:     []string{"NAME", "KIND", "VERSION", "STATE", "READY", "RESTARTS", "AGE", "LAST ERROR"},
		wideHeader: []string{"REQUIRED", "PID", "CAPABILITIES"},
	}
	for _, p := range plugins {
		pid := "-"
		if p.PID != 0 {
			pid = strconv.Itoa(p.PID)
		}
		t.rows = append(t.rows, tableRow{
			name: p.Name,
			cells: []string{p.Name, p.Kind, orDash(p.Version), p.State, strconv.FormatBool(p.Ready),
				strconv.Itoa(p.Restarts), age(p.Since), orDash(oneLine(p.LastError))},
			wide: []string{strconv.FormatBool(p.Required), pid, orDash(strings.Join(p.Capabilities, ","))},
		})
	}
	return t
}

func eventTable(events ...localapi.Event) table {
	t := table{
		header:     []string{"LAST SEEN", "TYPE", "REASON", "OBJECT", "COUNT", "MESSAGE"},
		wideHeader: []string{"FIRST SEEN", "UID"},
	}
	for _, e := range events {
		obj := eventObject(e.Object)
		t.rows = append(t.rows, tableRow{
			name: obj,
			cells: []string{e.LastTime.Format(time.RFC3339), e.Type, e.Reason, obj,
				strconv.Itoa(e.Count), oneLine(e.Message)},
			wide: []string{e.FirstTime.Format(time.RFC3339), orDash(e.Object.UID)},
		})
	}
	return t
}

// eventObject is Kind/namespace/name, Kind/name or Kind.
func eventObject(o localapi.EventObject) string {
	switch {
	case o.Namespace != "":
		return o.Kind + "/" + o.Namespace + "/" + o.Name
	case o.Name != "":
		return o.Kind + "/" + o.Name
	}
	return o.Kind
}

func nodeTable(n localapi.NodeInfo) table {
	ready := "yes"
	if !n.Ready {
		ready = "no"
	}
	return table{
		header:     []string{"HOSTNAME", "VERSION", "READY", "PLUGINS", "PODS", "UP", "REASON"},
		wideHeader: []string{"PLATFORM", "GO", "PLUGINS NOT READY"},
		rows: []tableRow{{
			name: n.Hostname,
			cells: []string{n.Hostname, orDash(n.HostVersion), ready, fmt.Sprintf("%d/%d", n.Plugins.Ready, n.Plugins.Total),
				strconv.Itoa(n.Pods), age(n.Started), orDash(n.NotReady)},
			wide: []string{n.OS + "/" + n.Arch, n.GoVersion, orDash(strings.Join(n.Plugins.NotReady, ","))},
		}},
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func age(since time.Time) string {
	if since.IsZero() {
		return "-"
	}
	return time.Since(since).Round(time.Second).String()
}
