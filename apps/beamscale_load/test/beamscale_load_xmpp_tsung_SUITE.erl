%% Tsung's jabber examples (/usr/share/doc/tsung/examples), read by the xmpp kind's Tsung reader
%% (beamscale_load_xmpp_tsung) and run against a real ejabberd of the suite's own
%% (beamscale_load_xmpp_server): each with only its server, domain, users, durations and think
%% times rewritten. The kind's own steps are beamscale_load_xmpp_SUITE's.
-module(beamscale_load_xmpp_tsung_SUITE).

-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([tsung_jabber/1, tsung_roster/1, tsung_register/1, tsung_muc/1, tsung_node/1,
         tsung_privacy/1, tsung_starttls/1, tsung_bosh/1, register_existing/1,
         register_new/1]).
-export([tsung_jabber/0, tsung_roster/0, tsung_register/0, tsung_muc/0, tsung_node/0,
         tsung_privacy/0, tsung_starttls/0, tsung_bosh/0, register_existing/0,
         register_new/0]).

-import(beamscale_load_servers, [run/1]).

-define(USERS, 40).

%% The rewrite of every think time to 1 s.
-define(THINKS, "(<thinktime value=)\"[^\"]*\"").

suite() -> [{timetrap, {minutes, 2}}].

all() -> [tsung_jabber, tsung_roster, tsung_register, tsung_muc, tsung_node, tsung_privacy,
          tsung_starttls, tsung_bosh, register_existing, register_new].

%% Fails, not skips, when ejabberd cannot start.
init_per_suite(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_xmpp_tsung_SUITE"),
    {Port, Http, Stop} = beamscale_load_xmpp_server:start(Dir, ?USERS, #{}),
    [{port, Port}, {http, Http}, {stop, Stop} | Config].

end_per_suite(Config) ->
    (proplists:get_value(stop, Config))(),
    Config.

clean(T) ->
    ?assertEqual(#{}, maps:get(reasons, T)),
    ?assertEqual(0, maps:get(errors, T)),
    ?assert(maps:get(sessions_done, T) >= 5).


refused(T) ->
    ?assertEqual([], [R || R <- maps:keys(maps:get(reasons, T)),
                           not lists:prefix("XMPP iq error", binary_to_list(R))]),
    ?assert(maps:get(errors, T) =< maps:get(sessions_done, T) div 2),
    ?assert(maps:get(sessions_done, T) >= 5).

%% Tsung's example `Name' with only its server, domain and user options, durations, arrivals
%% and think times rewritten (1 s thinks, a 2 s phase): nothing else.
example(Config, Name) -> example(Config, Name, []).

example(Config, Name, Keep) -> example(Config, Name, Keep, []).

example(Config, Name, Keep, Extra) ->
    {ok, Bin0} = file:read_file("/usr/share/doc/tsung/examples/" ++ Name),
    Bin = case lists:suffix(".gz", Name) of
              true -> zlib:gunzip(Bin0);
              false -> Bin0
          end,
    Port = integer_to_list(proplists:get_value(port, Config)),
    Rewrites = [{"<server host=.[^ ]*. port=.5222. type=(.)tcp.",
                 "<server host='127.0.0.1' port='" ++ Port ++ "' type='tcp'"},
                {"(<arrivalphase [^>]*duration=)\"[^\"]*\" unit=\"[a-z]*\"",
                 "\\1\"2\" unit=\"second\""},
                {"interarrival=\"[^\"]*\"", "interarrival=\"0.2\""},
                {"arrivalrate=\"[^\"]*\"", "arrivalrate=\"5\""},
                {?THINKS, "\\1\"1\""},
                {"(name=\"domain\" value=)\"[^\"]*\"", "\\1\"bs.test\""},
                {"(name=\"userid_max\" value=)\"[0-9]*\"", "\\1\"40\""},
                {"(name=\"username\" value=)\"[^\"]*\"", "\\1\"user\""},
                {"(name=\"passwd\" value=)\"[^\"]*\"", "\\1\"pass\""},
                {"(name=\"pubsub_service\" value=)\"[^\"]*\"", "\\1\"pubsub.bs.test\""},
                {"(name=\"muc_service\" value=)\"[^\"]*\"", "\\1\"conference.bs.test\""}],
    Text = lists:foldl(fun({From, To}, T) -> re:replace(T, From, To, [global, {return, list}])
                       end, unicode:characters_to_list(Bin),
                       [R || {F, _} = R <- Rewrites ++ Extra, not lists:member(F, Keep)]),
    run_text(Name, Text).

run_text(Name, Text) ->
    S = case beamscale_load_tsung:from_text(Name, Text) of
            {ok, S0, _Ignored} -> S0;
            {error, E} -> ct:fail("~ts", [beamscale_load_tsung:format_error(E)])
        end,
    #{total := T} = run(S),
    ct:pal("~ts: ~p", [Name, maps:with([requests, errors, reasons, counts, sessions_done], T)]),
    T.

tsung_jabber() -> [{doc, "Tsung's jabber.xml runs with its servers and durations rewritten."}].
tsung_jabber(Config) ->
    T = example(Config, "jabber.xml.gz"),
    ?assert(maps:get(sessions_done, T) >= 5).

tsung_roster() ->
    [{doc, "Tsung's jabber_roster.xml runs with no errors, its no_ack sends apart from the "
           "timed requests (Tsung's request_noack): the latency is the acked requests' only."}].
tsung_roster(Config) ->
    T = example(Config, "jabber_roster.xml"),
    clean(T),
    %% A session sends 17: connect, auth_get, auth_set_plain, roster get and close acked (5);
    %% the initial and final presences, 5 roster adds and 5 subscribes no_ack (12).
    #{sessions_done := N, requests := Requests, counts := Counts, latency := Latency} = T,
    ?assertEqual(N, maps:get(sessions_started, T)),
    ?assertEqual(17 * N, Requests),
    ?assertEqual(12 * N, maps:get(<<"request_noack">>, Counts, 0)),
    ?assertMatch(#{count := C} when C =:= 5 * N, Latency).

tsung_register() -> [{doc, "Tsung's jabber_register.xml runs with no errors."}].
tsung_register(Config) ->
    %% Its own user names (tsung1...), none of which exists before.
    clean(example(Config, "jabber_register.xml",
                  ["(name=\"username\" value=)\"[^\"]*\"", "(name=\"passwd\" value=)\"[^\"]*\"",
                   "(name=\"userid_max\" value=)\"[0-9]*\""])).

tsung_muc() -> [{doc, "Tsung's jabber_muc.xml runs with no errors."}].
tsung_muc(Config) ->
    clean(example(Config, "jabber_muc.xml")).

%% Besides the rewrites: the static <user> that creates the node goes (static arrivals are
%% refused) and its session gets arrivals of its own; a subscriber that comes before the node
%% exists is refused (item-not-found), as with Tsung.
tsung_node() -> [{doc, "Tsung's jabber_node.xml runs, refusals only for nodes not made yet."}].
tsung_node(Config) ->
    refused(example(Config, "jabber_node.xml", [],
                    [{"<user session=\"create_node\"[^>]*></user>", ""},
                     {"probability='0'", "probability='20'"},
                     {"probability=\"100\"", "probability=\"80\""}])).

%% The example activates a list "public" it never made: ejabberd refuses it (item-not-found).
tsung_privacy() -> [{doc, "Tsung's jabber_privacy.xml runs, its one refused list excepted."}].
tsung_privacy(Config) ->
    T = example(Config, "jabber_privacy.xml"),
    ?assertEqual([<<"XMPP iq error: item-not-found">>], maps:keys(maps:get(reasons, T))),
    ?assertEqual(maps:get(sessions_done, T), maps:get(errors, T)).

%% Besides the rewrites: its user file (file_server) is one the test writes.
tsung_starttls() -> [{doc, "Tsung's jabber_starttls.xml runs with its user file rewritten."}].
tsung_starttls(Config) ->
    clean(example(Config, "jabber_starttls.xml", [?THINKS], users(Config) ++ shipped_thinks())).

%% bosh.xml:63 and jabber_starttls.xml:67 say value="2  ": kept as shipped (Tsung reads it, as
%% beamscale now does), the other think times shortened.
shipped_thinks() ->
    [{"<thinktime value=\"[35]\">", "<thinktime value=\"1\">"}].

users(Config) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "beamscale_load_xmpp_tsung_SUITE_users"),
    Users = filename:join(Dir, "users.csv"),
    ok = file:write_file(Users, [io_lib:format("user~b,pass~b~n", [N, N])
                                 || N <- lists:seq(1, ?USERS)]),
    [{"value=\"/home/nniclaus/.tsung/usernames.csv\"", "value=\"" ++ Users ++ "\""}].

%% Besides the rewrites: its server (type bosh, on ejabberd's HTTP port) and its user file.
tsung_bosh() -> [{doc, "Tsung's bosh.xml runs over BOSH with its server and user file rewritten."}].
tsung_bosh(Config) ->
    Http = integer_to_list(proplists:get_value(http, Config)),
    T = example(Config, "bosh.xml", [?THINKS],
                [{"<server host=\"myserver\" port=\"5280\"",
                  "<server host=\"127.0.0.1\" port=\"" ++ Http ++ "\""}
                 | users(Config) ++ shipped_thinks()]),
    clean(T),
    %% connect, auth_sasl, connect, bind, session, presence, roster get, close.
    ?assertEqual(8 * maps:get(sessions_done, T), maps:get(requests, T)).

%% jabber_register.xml with bench/xmpp_register_vs_tsung.sh's rewrites (the server, 1 s of
%% arrivals at 20/s, bs.test, the user name and userid_max): its `<match when="match">error'
%% counted against what ejabberd itself says of the registrations, its users counted before and
%% after. Every session registers once, so match + nomatch is the sessions started, and nomatch
%% (a registration answered without an error) is the users ejabberd made.
register_run(Config, User, Max) ->
    {ok, Bin} = file:read_file("/usr/share/doc/tsung/examples/jabber_register.xml"),
    Port = integer_to_list(proplists:get_value(port, Config)),
    Rewrites = [{"<server host='[^']*' port='5222'", "<server host='127.0.0.1' port='" ++ Port
                 ++ "'"},
                {"duration=\"15\" unit=\"minute\"", "duration=\"1\" unit=\"second\""},
                {"maxnumber=\"200000\" interarrival=\"0.0025\"",
                 "maxnumber=\"20\" interarrival=\"0.05\""},
                {"name=\"domain\" value=\"[^\"]*\"", "name=\"domain\" value=\"bs.test\""},
                {"name=\"username\" value=\"[^\"]*\"",
                 "name=\"username\" value=\"" ++ User ++ "\""},
                {"name=\"passwd\" value=\"[^\"]*\"", "name=\"passwd\" value=\"pass\""},
                {"name=\"userid_max\" value=\"[0-9]*\"",
                 "name=\"userid_max\" value=\"" ++ integer_to_list(Max) ++ "\""}],
    Text = lists:foldl(fun({From, To}, T) -> re:replace(T, From, To, [global, {return, list}])
                       end, unicode:characters_to_list(Bin), Rewrites),
    Http = proplists:get_value(http, Config),
    Before = beamscale_load_xmpp_server:registered(Http),
    T = run_text("jabber_register.xml", Text),
    Made = beamscale_load_xmpp_server:registered(Http) - Before,
    #{sessions_started := N, counts := Counts} = T,
    ct:pal("~ts: ~b sessions, ~b users made", [User, N, Made]),
    ?assert(N >= 10),
    ?assertEqual(#{<<"match.-">> => N - Made, <<"nomatch.-">> => Made},
                 maps:with([<<"match.-">>, <<"nomatch.-">>], Counts)),
    Made.

register_existing() ->
    [{doc, "jabber_register.xml on users that exist: ejabberd makes none, every registration "
           "is answered with an error and matched."}].
register_existing(Config) ->
    ?assertEqual(0, register_run(Config, "user", ?USERS)).

register_new() ->
    [{doc, "jabber_register.xml on new users: every user ejabberd makes is a nomatch, every "
           "registration it refuses a match."}].
register_new(Config) ->
    ?assert(register_run(Config, "fresh", 1000000) > 0).
