%% Source addresses as Tsung takes them (issue #38): any address of the load node's host,
%% `<ip scan="true" value="IFACE">' and `<iprange>'. Addresses other than loopback live in a
%% network namespace made here (a veth pair inside it, nothing added outside), where a peer
%% node runs the load against a TCP server that records whom it accepted. The namespace is
%% removed after, with anything left in it (beamscale_load_test_netns).
-module(beamscale_load_sources_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([loopback_here/1, scan_and_range/1, not_assigned/1]).
-export([loopback_here/0, scan_and_range/0, not_assigned/0]).

-define(SERVER, "10.77.0.1").
-define(PORT, 7700).
-define(CALL_TIMEOUT, 30000).

suite() -> [{timetrap, {minutes, 1}}].

all() -> [loopback_here, scan_and_range, not_assigned].

init_per_suite(Config) ->
    Ns = "bs_sources_" ++ os:getpid(),
    try
        ok = ns(Ns),
        [{ns, Ns}, {peer, beamscale_load_test_netns:peer(Ns)} | Config]
    catch C:R:St -> beamscale_load_test_netns:remove(Ns), erlang:raise(C, R, St)
    end.

end_per_suite(Config) ->
    catch peer:stop(?config(peer, Config)),
    Ns = ?config(ns, Config),
    beamscale_load_test_netns:remove(Ns),
    ?assertNot(lists:member(Ns, beamscale_load_test_netns:list())).

%% A namespace with a veth pair: v0 holds the users' addresses, v1 the server's.
ns(Ns) ->
    beamscale_load_test_netns:add(Ns),
    lists:foreach(fun(C) -> beamscale_load_test_netns:ip(["-n", Ns | C]) end,
                  [["link", "add", "v0", "type", "veth", "peer", "name", "v1"],
                   ["addr", "add", "10.77.0.2/24", "dev", "v0"],
                   ["addr", "add", "10.77.0.3/24", "dev", "v0"],
                   ["addr", "add", ?SERVER ++ "/24", "dev", "v1"],
                   ["link", "set", "v0", "up"], ["link", "set", "v1", "up"]]).

tsung(Ips) ->
    Text = io_lib:format(
             "<?xml version=\"1.0\"?>\n<tsung>\n"
             "<clients><client host=\"localhost\">~ts</client></clients>\n"
             "<servers><server host=\"" ?SERVER "\" port=\"~b\" type=\"tcp\"/></servers>\n"
             "<load><arrivalphase phase=\"1\" duration=\"1\" unit=\"second\">"
             "<users interarrival=\"0.1\" unit=\"second\"/></arrivalphase></load>\n"
             "<sessions><session name=\"s\" probability=\"100\" type=\"ts_raw\">"
             "<request><raw data=\"hello\" ack=\"local\"/></request>"
             "</session></sessions>\n</tsung>\n", [Ips, ?PORT]),
    {ok, S, _} = beamscale_load_tsung:from_text("sources.xml", lists:flatten(Text)),
    S.

run(Config, S) ->
    peer:call(?config(peer, Config), beamscale_load_run, run,
              [S#{time_limit_s := 20}, maps:get(targets, S), #{seed => 1}], ?CALL_TIMEOUT).

loopback_here() -> [{doc, "Here, 127.0.0.2 (lo's network) is accepted, 10.77.0.2 (only in the "
                          "namespace) refused naming this host's interfaces."}].
loopback_here(_Config) ->
    ?assertEqual({ok, [{127, 0, 0, 2}]}, beamscale_load_source:resolve([{127, 0, 0, 2}])),
    {error, E} = beamscale_load_source:resolve([{10, 77, 0, 2}]),
    Text = lists:flatten(beamscale_load_source:format_error(E)),
    ct:pal("~ts", [Text]),
    ?assertNotEqual(nomatch, string:find(Text, "10.77.0.2 is not an address")),
    ?assertNotEqual(nomatch, string:find(Text, "lo 127.0.0.1")).

scan_and_range() -> [{doc, "<ip scan=\"true\" value=\"v0\"> and <iprange>: users bind v0's "
                           "two addresses in turn; the server sees both."}].
scan_and_range(Config) ->
    P = ?config(peer, Config),
    Rec = peer:call(P, beamscale_load_test_netns, recorder, [{10, 77, 0, 1}, ?PORT],
                    ?CALL_TIMEOUT),
    ?assert(is_pid(Rec)),
    [begin
         {ok, #{total := T}} = run(Config, tsung(Ips)),
         ct:pal("~ts: ~p", [Ips, maps:with([sessions_done, errors, reasons], T)]),
         ?assert(maps:get(sessions_done, T) >= 3),
         ?assertEqual(0, maps:get(errors, T))
     end || Ips <- ["<ip scan=\"true\" value=\"v0\"/>", "<iprange value=\"10.77.0.2-3\"/>"]],
    ?assertEqual(["10.77.0.2", "10.77.0.3"],
                 peer:call(P, beamscale_load_test_netns, accepted, [Rec])).

not_assigned() -> [{doc, "An address the load node lacks stops the run before any user, naming "
                         "its interfaces; an unknown interface too."}].
not_assigned(Config) ->
    [begin
         {error, E} = run(Config, tsung(Ips)),
         Text = lists:flatten(peer:call(?config(peer, Config), beamscale_load_source,
                                        format_error, [E])),
         ct:pal("~ts", [Text]),
         ?assertNotEqual(nomatch, string:find(Text, Want)),
         ?assertNotEqual(nomatch, string:find(Text, "v0 10.77.0.2, 10.77.0.3"))
     end || {Ips, Want} <- [{"<ip value=\"10.77.0.9\"/>", "10.77.0.9 is not an address"},
                            {"<ip scan=\"true\" value=\"eth9\"/>", "interface eth9"}]].
