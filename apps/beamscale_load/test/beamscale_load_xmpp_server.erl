%% An ejabberd of its own for the xmpp suites (and bench/xmpp_vs_tsung.sh): Debian's package run
%% as a plain Erlang node (no distribution, so no epmd and no cookie) with its configuration,
%% Mnesia spool and log in a throwaway directory, c2s (STARTTLS offered, a certificate made by
%% the test) and HTTP (BOSH, WebSocket) on free ports of 127.0.0.1, registration open, legacy
%% and anonymous authentication on, and users `user1'..`userN' (passwords `pass1'..) made up
%% front; its count of registered users asked of its own HTTP API (`registered/1'); stopped
%% by its OS pid (also written to Dir/ejabberd.pid, for bench/xmpp_vs_tsung.sh,
%% which starts it with `-eval' outside Common Test).
-module(beamscale_load_xmpp_server).

-export([start/3, domain/0, registered/1]).

-define(DOMAIN, "bs.test").
-define(LIBS, "/usr/lib/x86_64-linux-gnu").
%% Users registered before the node says it is ready, within this time.
-define(READY_MS, 60000).

%% @doc The test domain.
domain() -> ?DOMAIN.

%% @doc Start it in `Dir' with `Users' users: `{C2sPort, HttpPort, Stop}'.
start(Dir, Users, Opts) ->
    {_Ca, Cert, Key} = beamscale_load_servers:certificate(Dir),
    {ok, C} = file:read_file(Cert),
    {ok, K} = file:read_file(Key),
    Pem = filename:join(Dir, "ejabberd.pem"),
    ok = file:write_file(Pem, [C, K]),
    C2s = maps:get(port, Opts, beamscale_load_servers:free_port()),
    Http = beamscale_load_servers:free_port(),
    Conf = filename:join(Dir, "ejabberd.yml"),
    ok = file:write_file(Conf, config(Pem, C2s, Http)),
    Spool = filename:join(Dir, "spool"),
    Ready = filename:join(Dir, "ready"),
    _ = file:delete(Ready),
    Eval = io_lib:format("[ejabberd_auth:try_register(<<\"user\", (integer_to_binary(N))/binary>>,"
                         " <<\"~s\">>, <<\"pass\", (integer_to_binary(N))/binary>>)"
                         " || N <- lists:seq(1, ~b)], file:write_file(\"~s\", <<\"ok\">>).",
                         [?DOMAIN, Users, Ready]),
    Args = ["EJABBERD_CONFIG_PATH=" ++ Conf,
            "EJABBERD_LOG_PATH=" ++ filename:join(Dir, "ejabberd.log"),
            "ERL_LIBS=" ++ ?LIBS, "ERL_CRASH_DUMP=" ++ filename:join(Dir, "erl_crash.dump"),
            "erl", "-noinput", "-mnesia", "dir", "\"" ++ Spool ++ "\"", "-s", "ejabberd",
            "-eval", lists:flatten(Eval)],
    Start = erlang:monotonic_time(millisecond),
    P = open_port({spawn_executable, os:find_executable("env")},
                  [{args, Args}, {cd, Dir}, stderr_to_stdout, exit_status, binary]),
    {os_pid, Pid} = erlang:port_info(P, os_pid),
    ok = file:write_file(filename:join(Dir, "ejabberd.pid"), integer_to_list(Pid)),
    Stop = fun() -> os:cmd("kill " ++ integer_to_list(Pid)), catch port_close(P), ok end,
    ok = ready(Ready, P, Start + ?READY_MS, Stop),
    io:format("ejabberd ready with ~b users in ~b ms~n",
           [Users, erlang:monotonic_time(millisecond) - Start]),
    {C2s, Http, Stop}.

%% @doc The users registered on the server of HTTP port `Http', as ejabberd counts them (its
%% `registered_users' command, allowed from 127.0.0.1 only).
registered(Http) ->
    {ok, _} = application:ensure_all_started(inets),
    Url = "http://127.0.0.1:" ++ integer_to_list(Http) ++ "/api/registered_users",
    Body = "{\"host\": \"" ++ ?DOMAIN ++ "\"}",
    {ok, {{_, 200, _}, _, Json}} = httpc:request(post, {Url, [], "application/json", Body},
                                                 [{timeout, 10000}], []),
    %% A JSON list of user names (letters and digits here): counted by their quotes.
    length(string:split(Json, "\"", all)) div 2.

%% Ready once its users are registered (its listeners are up before): the file says so. Its
%% output is kept for the failure's text.
ready(File, P, Deadline, Stop) -> ready(File, P, Deadline, Stop, []).

ready(File, P, Deadline, Stop, Out) ->
    receive
        {P, {data, D}} -> ready(File, P, Deadline, Stop, [Out, D]);
        {P, {exit_status, St}} -> ct:fail("ejabberd exited (~b): ~ts", [St, Out])
    after 50 ->
        case {filelib:is_file(File), erlang:monotonic_time(millisecond) > Deadline} of
            {true, _} -> ok;
            {false, true} -> Stop(), ct:fail("ejabberd not ready in time: ~ts", [Out]);
            {false, false} -> ready(File, P, Deadline, Stop, Out)
        end
    end.

config(Pem, C2s, Http) ->
    io_lib:format(
      "loglevel: warning\nhosts:\n  - ~s\ncertfiles:\n  - \"~s\"\n"
      "acme:\n  auto: false\nregistration_timeout: infinity\n"
      "listen:\n"
      "  -\n    port: ~b\n    ip: \"127.0.0.1\"\n    module: ejabberd_c2s\n"
      "    max_stanza_size: 262144\n    starttls: true\n"
      "  -\n    port: ~b\n    ip: \"127.0.0.1\"\n    module: ejabberd_http\n"
      "    request_handlers:\n      /http-bind: mod_bosh\n      /ws: ejabberd_http_ws\n"
      "      /api: mod_http_api\n"
      "auth_method: [internal, anonymous]\nanonymous_protocol: both\n"
      "auth_password_format: plain\ndisable_sasl_mechanisms: []\n"
      "acl:\n  local:\n    user_regexp: \"\"\n"
      "api_permissions:\n  \"count users\":\n    who:\n      ip: 127.0.0.1/32\n"
      "    what:\n      - registered_users\n"
      "access_rules:\n  local:\n    allow: local\n  c2s:\n    allow: all\n"
      "  register:\n    allow: all\n  everyone:\n    allow: all\n"
      "shaper_rules:\n  max_user_sessions: 10\n  max_user_offline_messages: 5000\n"
      "modules:\n"
      "  mod_register:\n    ip_access: all\n    access: register\n"
      "  mod_legacy_auth: {}\n  mod_roster: {}\n  mod_privacy: {}\n  mod_disco: {}\n"
      "  mod_caps: {}\n  mod_offline: {}\n  mod_ping: {}\n  mod_bosh: {}\n"
      "  mod_muc:\n    access_create: everyone\n    access: everyone\n    default_room_options:\n"
      "      persistent: false\n"
      "  mod_pubsub:\n    access_createnode: everyone\n    plugins:\n      - flat\n      - pep\n",
      [?DOMAIN, Pem, C2s, Http]).
