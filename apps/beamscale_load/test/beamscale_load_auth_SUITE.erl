%% Tsung's http-digest.xml and http-oauth.xml against a server started here on 127.0.0.1
%% (beamscale_load_auth_server: Debian's nginx has no digest module) that verifies every digest
%% response and OAuth signature itself; only host, port and durations are rewritten.
-module(beamscale_load_auth_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_testcase/2, end_per_testcase/2]).
-export([digest/1, oauth/1, digest/0, oauth/0]).

-define(EXAMPLES, "/usr/share/doc/tsung/examples/").

suite() -> [{timetrap, {minutes, 1}}].

all() -> [digest, oauth].

init_per_testcase(digest, Config) ->
    [{server, beamscale_load_auth_server:start(tls)} | Config];
init_per_testcase(oauth, Config) ->
    [{server, beamscale_load_auth_server:start(tcp)} | Config].

end_per_testcase(_, Config) ->
    beamscale_load_auth_server:stop(?config(server, Config)).

digest() -> [{doc, "http-digest.xml over TLS: each challenge answered with a digest the server "
                   "verifies, nextnonce taken."}].
digest(Config) ->
    Srv = ?config(server, Config),
    T = run(Config, "http-digest.xml", [{<<"host=\"localhost\" port=\"443\"">>, host(Srv)}]),
    Sessions = maps:get(sessions_done, T),
    ?assert(Sessions >= 3),
    %% The example's first request has no credentials: the 401 it asks for is the challenge its
    %% <dyn_variable> reads, expected, not an error (Tsung shows 0 errors).
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    ?assertEqual(#{401 => Sessions, 200 => 2 * Sessions}, maps:get(statuses, T)),
    ?assertEqual(#{challenge => Sessions, digest_ok => 2 * Sessions},
                 beamscale_load_auth_server:counts(Srv)).

oauth() -> [{doc, "http-oauth.xml: every signature verifies; tokens taken by XPath are used."}].
oauth(Config) ->
    Srv = ?config(server, Config),
    T = run(Config, "http-oauth.xml", [{<<"port=\"8000\"">>, port(Srv)}]),
    Sessions = maps:get(sessions_done, T),
    ?assert(Sessions >= 3),
    %% The example's last request names its token `%%access_token_secret%%' (no `_': not a
    %% variable), a token the server never issued: its only error.
    ?assertEqual(#{<<"http status 401">> => Sessions}, maps:get(reasons, T)),
    ?assertEqual(#{oauth_ok => 3 * Sessions, oauth_unknown_token => Sessions},
                 beamscale_load_auth_server:counts(Srv)).

host(Srv) -> <<"host=\"127.0.0.1\" ", (port(Srv))/binary>>.

port(Srv) ->
    iolist_to_binary(["port=\"", integer_to_list(beamscale_load_auth_server:port(Srv)), "\""]).

run(Config, Name, Rewrites) ->
    {ok, Bin} = file:read_file(?EXAMPLES ++ Name),
    R = Rewrites ++ [{<<"duration=\"[0-9]+\" unit=\"second\"">>,
                      <<"duration=\"1\" unit=\"second\"">>},
                     {<<"interarrival=\"1\" unit=\"second\"">>,
                      <<"interarrival=\"0.2\" unit=\"second\"">>}],
    Xml = lists:foldl(fun({A, B}, X) -> re:replace(X, A, B, [global, {return, binary}]) end,
                      Bin, R),
    File = filename:join(?config(priv_dir, Config), Name),
    ok = file:write_file(File, Xml),
    {ok, S, _} = beamscale_load_tsung:load(File),
    {ok, #{total := T}} = beamscale_load_run:run(S#{time_limit_s := 10}, maps:get(targets, S),
                                                 #{seed => 1}),
    ct:pal("~ts: ~p", [Name, maps:with([requests, errors, sessions_done, reasons, statuses], T)]),
    T.
