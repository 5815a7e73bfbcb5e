%% The http2 kind against each misbehaving server of beamscale_load_h2_hostile (4 users, a 1 s
%% request timeout): the run ends within its timeouts + 2 s, this node's memory stays under
%% 300 MB, and every error is counted under its named reason.
-module(beamscale_load_h2_hostile_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, groups/0, hostile/0, hostile/1]).

-define(MAX_MEMORY, 300 * 1024 * 1024).
-define(LATE_MS, 2000).
-define(TIMEOUT_MS, 1000).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [{group, servers}].

groups() -> [{servers, [], [hostile]}].

%% One case for all the servers, each a load of its own: a failure names the server.
hostile() -> [{doc, "Each hostile HTTP/2 server: bounded memory, deadline held, a named reason."}].

hostile(_Config) ->
    [run(Name) || Name <- beamscale_load_h2_hostile:names()],
    ok.

%% The reason each server's requests fail with.
expect(continuation_flood) -> "header block above 64 KiB";
expect(continuation_empty) -> "flood: above 1000 control frames (continuation)";
expect(header_list_bomb) -> "HPACK: header list above the limit";
expect(table_size_bomb) -> "HPACK: table size update to 268435455 above the 4096 allowed";
expect(settings_flood) -> "flood: above 1000 control frames (settings)";
expect(ping_flood) -> "flood: above 1000 control frames (ping)";
expect(window_never_opened) -> "flow-control window never opened";
expect(data_past_window) -> "reply above max_reply_bytes";
expect(goaway_mid_stream) -> "GOAWAY (no_error) before the response";
expect(reset_storm) -> "flood: above 1000 control frames (rst_stream)";
expect(reset_each_stream) -> "stream reset (RST_STREAM refused_stream)".

run(Name) ->
    {Port, Stop} = beamscale_load_h2_hostile:start(Name),
    try
        S = beamscale_load_servers:scenario(io_lib:format(
              "{targets, [{t, #{address => \"127.0.0.1:~b\", max_reply_bytes => 2000000}}]}.\n"
              "{phases, [{p, #{duration_s => 1, users_at => [{0, s}, {0.2, s}, {0.4, s},"
              " {0.6, s}]}}]}.\n"
              "{sessions, [{s, #{steps => [{http2, #{method => post, body => <<\"abc\">>,"
              " streams => 3, timeout_ms => ~b}}]}}]}.\n", [Port, ?TIMEOUT_MS])),
        {#{total := T}, Elapsed, Peak} = beamscale_load_servers:run_sampled(S),
        #{errors := Errors, reasons := Counted} = T,
        ct:pal("~ts: ~b ms, peak ~.1f MB, ~b errors ~tp",
               [Name, Elapsed, Peak / 1048576, Errors, Counted]),
        Want = unicode:characters_to_binary(expect(Name)),
        ?assertEqual({Name, 4}, {Name, Errors}),
        ?assertEqual({Name, [Want]},
                     {Name, [Want || R <- maps:keys(Counted), binary:match(R, Want) =/= nomatch]}),
        ?assertEqual({Name, 1}, {Name, map_size(Counted)}),
        ?assert(Elapsed =< 600 + ?TIMEOUT_MS + ?LATE_MS, {Name, late, Elapsed}),
        ?assert(Peak < ?MAX_MEMORY, {Name, memory, Peak})
    after
        Stop()
    end.
