// Command vcsim serves the govmomi vSphere simulator (github.com/vmware/govmomi/simulator)
// for banlieue's vSphere peer tests.
//
// Why our own main: since govmomi v0.47.0 upstream's vcsim/ is a separate module
// with "replace github.com/vmware/govmomi => ../" and no tags of its own, so the
// Go module proxy cannot build it. The simulator package itself lives in the root
// module, which has no replace. This main keeps upstream's flag names for the
// options our tests use, so vcsim documentation applies; see ../../README.md.
//
// stdout: one line "export GOVC_URL=<url> GOVC_SIM_PID=<pid>" once the server
// listens (with -l 127.0.0.1:0 this is how the caller learns the port).
// Exits on SIGINT/SIGTERM after removing the model's temporary datastore dirs.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/vmware/govmomi/simulator"
	// vCenter's REST API (/rest, /api: sessions, tags, cluster modules), registered on
	// the simulator by these packages' init, as upstream's vcsim does: CAPV logs in there.
	_ "github.com/vmware/govmomi/vapi/cluster/simulator"
	_ "github.com/vmware/govmomi/vapi/simulator"
)

// version is stamped by build.sh (-X main.version=<govmomi version>).
var version = "unknown"

func main() {
	model := simulator.VPX()

	flag.IntVar(&model.Datacenter, "dc", model.Datacenter, "Number of datacenters")
	flag.IntVar(&model.Cluster, "cluster", model.Cluster, "Number of clusters per datacenter")
	flag.IntVar(&model.ClusterHost, "host", model.ClusterHost, "Number of hosts per cluster")
	flag.IntVar(&model.Host, "standalone-host", model.Host, "Number of standalone hosts per datacenter")
	flag.IntVar(&model.Datastore, "ds", model.Datastore, "Number of local datastores")
	flag.IntVar(&model.Machine, "vm", model.Machine, "Number of virtual machines per resource pool")
	flag.IntVar(&model.Pool, "pool", model.Pool, "Number of child resource pools per cluster")
	flag.IntVar(&model.App, "app", model.App, "Number of vApps per cluster")
	flag.IntVar(&model.Pod, "pod", model.Pod, "Number of storage pods per datacenter")
	flag.IntVar(&model.Portgroup, "pg", model.Portgroup, "Number of distributed port groups per datacenter")
	flag.IntVar(&model.Folder, "folder", model.Folder, "Number of datacenters placed in a folder")
	flag.BoolVar(&model.Autostart, "autostart", model.Autostart, "Power on the VMs the model creates")
	apiVersion := &model.ServiceContent.About.ApiVersion
	flag.StringVar(apiVersion, "api-version", *apiVersion, "API version reported in ServiceContent.about")

	listen := flag.String("l", "127.0.0.1:8989", "Listen address (port 0 picks a free port)")
	useTLS := flag.Bool("tls", true, "Serve HTTPS")
	certFile := flag.String("tlscert", "", "PEM certificate file (default: a generated self-signed one)")
	keyFile := flag.String("tlskey", "", "PEM key file for -tlscert")
	user := flag.String("username", "", "Only this login username is accepted (default: any non-empty)")
	pass := flag.String("password", "", "Only this login password is accepted (default: any non-empty)")
	flag.BoolVar(&simulator.Trace, "trace", false, "Dump SOAP requests and responses to stderr")
	flag.IntVar(&model.DelayConfig.Delay, "delay", 0, "Delay in ms added to every method")
	methodDelay := flag.String("method-delay", "", "Per-method delay in ms: 'Method1:ms,Method2:ms'")
	flag.Parse()

	if flag.Arg(0) == "version" {
		fmt.Println(version)
		return
	}

	if *methodDelay != "" {
		delays, err := parseMethodDelay(*methodDelay)
		if err != nil {
			log.Fatal(err)
		}
		model.DelayConfig.MethodDelay = delays
		// Task bodies run after the method returns; they read the package-level delay.
		simulator.TaskDelay.MethodDelay = delays
	}

	u := &url.URL{Host: *listen}
	if *user != "" || *pass != "" {
		u.User = url.UserPassword(*user, *pass)
	}

	if err := model.Create(); err != nil {
		log.Fatal(err)
	}
	model.Service.Listen = u
	model.Service.RegisterEndpoints = true
	if *useTLS {
		model.Service.TLS = new(tls.Config)
		if *certFile != "" {
			cert, err := tls.LoadX509KeyPair(*certFile, *keyFile)
			if err != nil {
				log.Fatal(err)
			}
			model.Service.TLS.Certificates = []tls.Certificate{cert}
		}
	}

	server := model.Service.NewServer()
	fmt.Printf("export GOVC_URL=%s GOVC_SIM_PID=%d\n", server.URL, os.Getpid())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	server.Close()
	model.Remove()
}

func parseMethodDelay(s string) (map[string]int, error) {
	delays := map[string]int{}
	for _, pair := range strings.Split(s, ",") {
		method, ms, ok := strings.Cut(strings.TrimSpace(pair), ":")
		if !ok {
			return nil, fmt.Errorf("-method-delay %q: want Method:ms", pair)
		}
		n, err := strconv.Atoi(ms)
		if err != nil {
			return nil, fmt.Errorf("-method-delay %q: %v", pair, err)
		}
		delays[method] = n
	}
	return delays, nil
}
