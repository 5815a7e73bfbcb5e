%% @private The `<clients>' of a Tsung file for `beamscale_load_tsung_xml': the source addresses
%% of the clients on this machine and its load nodes, or the hosts of load nodes reached by ssh.
-module(beamscale_load_tsung_clients).

-export([clients/2]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [children/3, check_attrs/2, attr/2, attr/3, req/3, positive/3,
                                   positive_integer/3, bool/4, line/2, fail/4]).

%% The `<client>'s: on this machine (localhost, 127.x), users run in beamscale (`cpu' load nodes
%% on 127.0.0.1) and their `<ip value>'s are pooled as source addresses; on other hosts, each
%% is a host of load nodes reached by ssh, `cpu' nodes there, `weight' its share of the
%% arrivals, its `<ip>'s their source addresses. Both at once would need an sshd here: refused.
-spec clients([#xmlElement{}], map()) ->
    {[{term(), pos_integer()}], [{{string(), map()}, pos_integer()}],
     {pos_integer(), pos_integer()} | none, [string()]}.
clients(All, Ctx) ->
    %% Batch clients are the hosts of the job (`beamscale_load_tsung_batch'), reached by ssh.
    {Batch, Clients} = lists:partition(fun(C) -> attr(C, type) =:= "batch" end, All),
    BatchHosts = lists:append([beamscale_load_tsung_batch:hosts(C, Ctx) || C <- Batch]),
    [fail(C, Ctx, "<client scan_intf> is read on batch clients only (as Tsung); give "
                  "<ip scan=\"true\" value=\"IFACE\"/> instead", [])
     || C <- Clients, attr(C, scan_intf) =/= undefined],
    {Here, There} = lists:partition(fun(C) -> here(req(C, host, Ctx)) end, Clients),
    [fail(C, Ctx, "<client host=\"~ts\">: clients on this machine and on other hosts at once "
                  "are not supported (give this machine's address, reached by ssh, instead)",
          [req(C, host, Ctx)]) || There =/= [] orelse BatchHosts =/= [], C <- Here],
    Ips = lists:append([begin
                            check_attrs(C, Ctx),
                            lists:append([source_ip(Ip, Ctx)
                                          || Ip <- children(C, [ip, iprange], Ctx)])
                        end || C <- Here]),
    Weights = ["<client weight> on this machine (its load nodes share the arrivals equally)"
               || C <- Here, attr(C, weight) =/= undefined],
    {Ips, [remote_client(C, Ctx) || C <- There] ++ BatchHosts, local_nodes(Here, Ctx),
     lists:usort(Weights)}.

%% Tsung runs `cpu' emulators for a client; here, as many load nodes on 127.0.0.1 (one is
%% beamscale's own node, as one emulator is Tsung's).
local_nodes(Here, Ctx) ->
    case [{positive_integer(C, cpu, Ctx), line(C, Ctx)} || C <- Here, attr(C, cpu) =/= undefined] of
        [] -> none;
        [{_, Line} | _] = Cpus ->
            case lists:sum([N || {N, _} <- Cpus]) of
                1 -> none;
                N -> {N, Line}
            end
    end.

remote_client(C, Ctx) ->
    check_attrs(C, Ctx),
    Ips = [V || Ip <- children(C, [ip, iprange], Ctx), {V, _} <- source_ip(Ip, Ctx)],
    Nodes = case attr(C, cpu) of undefined -> 1; _ -> positive_integer(C, cpu, Ctx) end,
    Weight = case attr(C, weight) of undefined -> 1; _ -> positive(C, weight, Ctx) end,
    Host = [{nodes, Nodes}, {weight, Weight} | [{source_ips, Ips} || Ips =/= []]],
    {{req(C, host, Ctx), maps:from_list(Host)}, line(C, Ctx)}.

here("localhost") -> true;
here("127." ++ _) -> true;
here("::1") -> true;
here(_) -> false.

%% `<ip value>' (an address of the load node's host, IPv4 or IPv6), `<ip scan="true"
%% value="eth0">' (the addresses of that interface there), `<iprange value="10.0.0.1-20">' and
%% `<iprange version="v6" value="fd00::2-9">'.
source_ip(#xmlElement{name = iprange} = Ip, Ctx) ->
    check_attrs(Ip, Ctx),
    Range = case attr(Ip, version, "v4") of
                "v4" -> fun beamscale_load_source:range/1;
                "v6" -> fun beamscale_load_source:range6/1;
                V -> fail(Ip, Ctx, "<iprange version=\"~ts\"> (expected v4 or v6)", [V])
            end,
    case Range(req(Ip, value, Ctx)) of
        {ok, Addrs} -> [{inet:ntoa(A), line(Ip, Ctx)} || A <- Addrs];
        {error, Msg} -> fail(Ip, Ctx, "<iprange value>: ~ts", [Msg])
    end;
source_ip(Ip, Ctx) ->
    check_attrs(Ip, Ctx),
    Value = req(Ip, value, Ctx),
    case {bool(Ip, scan, false, Ctx), beamscale_load_source:parse(Value)} of
        {true, _} -> [{{interface, Value}, line(Ip, Ctx)}];
        {false, {ok, _}} -> [{Value, line(Ip, Ctx)}];
        {false, {error, Msg}} -> fail(Ip, Ctx, "<ip value>: ~ts", [Msg])
    end.
