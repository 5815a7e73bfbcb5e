%% The servers of bench/tsung_examples.sh, started by the test suites' own helpers (the same
%% ejabberd, MariaDB, PostgreSQL, slapd, mosquitto, nginx, websocketd, auth and echo servers
%% the CT suites run Tsung's examples against), and each example rewritten once, as a user
%% would, into OUT/NAME.xml for both tools. A file OUT/NAME.skip holds the reason an example
%% could not be prepared. Once OUT/ready exists the servers serve until OUT/stop appears; then
%% each is stopped by its helper (by OS pid) and the node halts.
%%   erl -pa ... -eval 'tsung_examples_servers:main(["OUT", "AMQP_PORT" | NAMES])'
-module(tsung_examples_servers).

-export([main/1]).

-define(EXAMPLES, "/usr/share/doc/tsung/examples/").
-define(XMPP_USERS, 40).
%% Hard bound on how long the servers stay up if the script never says stop (its own timeouts
%% end well before: 24 examples, two tools, `timeout 120' each).
-define(MAX_UP_MS, 3 * 3600 * 1000).

main([Out, Amqp | Names]) ->
    Config = [{priv_dir, Out}],
    Kinds = lists:usort([K || N <- Names, K <- [server(N)], K =/= none]),
    Servers = maps:from_list([{K, start(K, Config, Amqp)} || K <- Kinds]),
    [prepare(Out, N, Servers) || N <- Names],
    ok = file:write_file(filename:join(Out, "ready"), ""),
    wait(filename:join(Out, "stop"), erlang:monotonic_time(millisecond) + ?MAX_UP_MS),
    [catch stop(K, V) || {K, {ok, V}} <- maps:to_list(Servers)],
    halt().

wait(File, Deadline) ->
    case filelib:is_file(File) orelse erlang:monotonic_time(millisecond) > Deadline of
        true -> ok;
        false -> timer:sleep(200), wait(File, Deadline)
    end.

%% ---- which server an example talks to ----

server(N) when N =:= "http_simple"; N =:= "http_tag"; N =:= "http_setdynvars";
               N =:= "http_distributed" -> nginx;
server(N) when N =:= "pgsql"; N =:= "thinks"; N =:= "thinks2" -> pgsql;
server("http-digest") -> auth_tls;
server("http-oauth") -> auth_tcp;
server("mysql") -> mysql;
server("ldap") -> ldap;
server("mqtt") -> mqtt;
server("amqp") -> amqp;
server("raw") -> echo;
server("websocket") -> websocket;
server("fs-nfs") -> none;
server(_Xmpp) -> xmpp.

start(Kind, Config, Amqp) ->
    try {ok, start1(Kind, Config, Amqp)}
    catch C:R -> {error, lists:flatten(io_lib:format("~p:~0p", [C, R]))}
    end.

start1(nginx, Config, _) ->
    C = beamscale_load_servers:nginx_suite(
          Config, "nginx", "$status|$request_uri",
          "    location / { return 200 'hello'; }\n"
          "    location /test.html { return 200 '<html><title>Hello World Page</title></html>'; }\n"),
    #{port => proplists:get_value(port, C), stop => proplists:get_value(nginx, C)};
start1(pgsql, Config, _) ->
    C = beamscale_load_pgsql_SUITE:init_per_suite(Config),
    (proplists:get_value(info, C))#{config => C, stop_suite => beamscale_load_pgsql_SUITE};
start1(mysql, Config, _) ->
    C = beamscale_load_mysql_SUITE:init_per_suite(Config),
    (proplists:get_value(info, C))#{config => C, stop_suite => beamscale_load_mysql_SUITE};
start1(ldap, Config, _) ->
    C = beamscale_load_ldap_SUITE:init_per_suite(Config),
    #{port => proplists:get_value(port, C), stop => proplists:get_value(stop, C)};
start1(mqtt, Config, _) ->
    C = beamscale_load_mqtt_SUITE:init_per_suite(Config),
    #{port => proplists:get_value(port, C), stop => proplists:get_value(stop, C)};
start1(amqp, _Config, Amqp) ->
    %% The script's broker (channel_max 0, which Tsung asks for); amqp.xml expects test_exchange
    %% bound to test_queue, declared here as the amqp suite declares them.
    Port = list_to_integer(Amqp),
    Steps = "[{amqp, #{type => 'connection.open'}}, {amqp, #{type => 'channel.open'}},"
            " {amqp, #{type => 'exchange.declare', exchange => <<\"test_exchange\">>}},"
            " {amqp, #{type => 'queue.declare', queue => <<\"test_queue\">>}},"
            " {amqp, #{type => 'queue.bind', queue => <<\"test_queue\">>,"
            " exchange => <<\"test_exchange\">>, routing_key => <<\"test_queue\">>}},"
            " {amqp, #{type => 'connection.close'}}]",
    #{total := #{errors := 0}} = beamscale_load_servers:run(beamscale_load_servers:scenario(
        io_lib:format("{targets, [{t, #{address => \"127.0.0.1:~b\"}}]}.\n"
                      "{phases, [{p, #{duration_s => 1, rate => 2, max_users => 1}}]}.\n"
                      "{sessions, [{s, #{steps => ~ts}}]}.\n", [Port, Steps]))),
    #{port => Port, stop => fun() -> ok end};
start1(echo, _Config, _) ->
    {Port, Stop} = beamscale_load_servers:tcp_echo(),
    #{port => Port, stop => Stop};
start1(websocket, Config, _) ->
    %% A chat as websocket.xml expects: a login answered with a uid, then "ok" to each message.
    Dir = beamscale_load_servers:tmp_dir(Config, "websocketd"),
    Script = filename:join(Dir, "chat.sh"),
    ok = file:write_file(Script, "#!/bin/sh\nwhile IFS= read -r l; do case \"$l\" in\n"
                                 "*password*) echo \"{\\\"uid\\\":\\\"$$\\\"}\" ;;\n"
                                 "*) echo '{\"status\":\"ok\"}' ;;\nesac; done\n"),
    ok = file:change_mode(Script, 8#755),
    Port = beamscale_load_servers:free_port(),
    #{port => Port, stop => beamscale_load_servers:websocketd(Dir, Port, [], [Script])};
start1(auth_tls, _Config, _) -> auth(tls);
start1(auth_tcp, _Config, _) -> auth(tcp);
start1(xmpp, Config, _) ->
    Dir = beamscale_load_servers:tmp_dir(Config, "ejabberd"),
    {Port, Http, Stop} = beamscale_load_xmpp_server:start(Dir, ?XMPP_USERS, #{}),
    Users = filename:join(Dir, "users.csv"),
    ok = file:write_file(Users, [io_lib:format("user~b,pass~b~n", [N, N])
                                 || N <- lists:seq(1, ?XMPP_USERS)]),
    #{port => Port, http => Http, users => Users, stop => Stop}.

auth(Kind) ->
    Srv = beamscale_load_auth_server:start(Kind),
    #{port => beamscale_load_auth_server:port(Srv),
      stop => fun() -> beamscale_load_auth_server:stop(Srv) end}.

stop(_, #{stop_suite := Suite, config := C}) -> Suite:end_per_suite(C);
stop(_, #{stop := Stop}) -> Stop().

%% ---- the rewrites ----

prepare(Out, Name, Servers) ->
    File = filename:join(Out, Name ++ ".xml"),
    case server(Name) of
        none -> write(File, rewrite(Name, #{}, Out));
        K ->
            case maps:get(K, Servers) of
                {ok, Info} -> write(File, rewrite(Name, Info, Out));
                {error, E} -> file:write_file(filename:join(Out, Name ++ ".skip"),
                                              ["its server did not start: ", E])
            end
    end.

write(File, Text) -> ok = file:write_file(File, Text).

example(Name) ->
    case file:read_file(?EXAMPLES ++ Name ++ ".xml") of
        {ok, B} -> B;
        {error, enoent} ->
            {ok, Gz} = file:read_file(?EXAMPLES ++ Name ++ ".xml.gz"),
            zlib:gunzip(Gz)
    end.

%% The rewrites both tools run: the example's server becomes the one started here, every
%% client this host's controller VM, phases 2 s of about 2 users a second, whole-number think
%% times of 1 s (Tsung reads them as integers; "2  " as shipped is kept), and the monitors go
%% (SNMP and Erlang monitors of hosts this machine does not have: Tsung waits on them).
rewrite(Name, Info, Out) ->
    Common = [{"(?s)<monitoring>.*?</monitoring>", ""},
              {"(<arrivalphase [^>]*duration=)\"[^\"]*\" unit=\"[a-z]*\"", "\\1\"2\" unit=\"second\""},
              {"interarrival=\"[^\"]*\"", "interarrival=\"0.5\""},
              {"arrivalrate=\"[^\"]*\"", "arrivalrate=\"2\""},
              {"(<users [^>]*unit=)\"[a-z]*\"", "\\1\"second\""},
              {"(<thinktime[^>]*value=)\"[0-9.]+\"", "\\1\"1\""},
              {"(<thinktime[^>]*)min=\"[0-9.]+\" max=\"[0-9.]+\"", "\\1min=\"1\" max=\"2\""},
              {"(name=\"thinktime\" value=)\"[0-9.]+\"", "\\1\"1\""}],
    Clients = case Name of
                  %% A batch client: kept, the reason it cannot run here.
                  "fs-nfs" -> [];
                  _ -> [{"(?s)<clients>.*?</clients>",
                         "<clients><client host=\"localhost\" use_controller_vm=\"true\" "
                         "maxusers=\"1000\"/></clients>"}]
              end,
    lists:foldl(fun({From, To}, T) -> re:replace(T, From, To, [global, {return, binary}]) end,
                example(Name), Clients ++ Common ++ own(Name, Info, Out)).

port(#{port := P}) -> integer_to_list(P).

server_at(Info) -> server_at(Info, "tcp").
server_at(Info, Type) ->
    "<server host=\"127.0.0.1\" port=\"" ++ port(Info) ++ "\" type=\"" ++ Type ++ "\"".

-define(SERVER, "<server host=['\"][^'\"]*['\"] port=['\"][0-9]+['\"] type=['\"]([a-z]+)['\"]").

own("http_setdynvars", Info, Out) ->
    Csv = filename:join(Out, "setdynvars.csv"),
    ok = file:write_file(Csv, "user one;pass word\nuser two;pass%20word\n"),
    [{?SERVER, server_at(Info)}, {"./src/test/test_file_server.csv", Csv}];
own("http_distributed", Info, _) ->
    [{?SERVER, server_at(Info)},
     {"http://(linuxit02|localhost:8080)/", "http://127.0.0.1:" ++ port(Info) ++ "/"}];
own(N, Info, _) when N =:= "http_simple"; N =:= "http_tag"; N =:= "http-oauth";
                     N =:= "raw"; N =:= "websocket" ->
    [{?SERVER, server_at(Info)}];
own("http-digest", Info, _) -> [{?SERVER, server_at(Info, "ssl")}];
own(N, Info, _) when N =:= "pgsql"; N =:= "thinks"; N =:= "thinks2" ->
    #{user := U, password := P, database := D} = Info,
    [{?SERVER, server_at(Info)},
     {"database=\"bench\" username=\"bench\"", "database=\"" ++ D ++ "\" username=\"" ++ U ++ "\""},
     {"password=\"sesame\"", "password=\"" ++ P ++ "\""}];
own("mysql", #{user := U, password := P, database := D} = Info, _) ->
    [{?SERVER, server_at(Info)},
     {"database=\"test\" username=\"test\" password=\"test\"",
      "database=\"" ++ D ++ "\" username=\"" ++ U ++ "\" password=\"" ++ P ++ "\""}];
own("ldap", Info, _) ->
    %% The filter's %%cn:f%% calls a module the example does not ship: it goes.
    [{?SERVER, server_at(Info)},
     {"user=\"uid=nniclausse\" password=\"XXX\"",
      "user=\"cn=admin,dc=pablo-desktop\" password=\"secret\""}, {"%%cn:f%%", ""}];
own(N, Info, _) when N =:= "mqtt"; N =:= "amqp" ->
    %% The static <user> goes (beamscale refuses static arrivals); both sessions share the phase.
    [{?SERVER, server_at(Info)},
     {"<user session=\"[a-z_]+\" start_time=\"[0-9]+\" unit=\"second\"></user>", ""},
     {"probability=\"100\"", "probability=\"50\""}, {"probability=\"0\"", "probability=\"50\""},
     {"maxnumber=\"1\"", "maxnumber=\"4\""}, {"timeout=\"180\"", "timeout=\"5\""}];
own("fs-nfs", _, Out) -> [{"/mnt/bench/", Out ++ "/fs/"}];
own(Xmpp, Info, _) ->
    Users = {"value=\"/home/nniclaus/.tsung/usernames.csv\"",
             "value=\"" ++ maps:get(users, Info) ++ "\""},
    Server = case Xmpp of
                 "bosh" -> [{"<server host=\"myserver\" port=\"5280\" type=\"bosh\"",
                             "<server host=\"127.0.0.1\" port=\""
                             ++ integer_to_list(maps:get(http, Info)) ++ "\" type=\"bosh\""}];
                 _ -> [{?SERVER, server_at(Info)}]
             end,
    Accounts = case Xmpp of
                   %% Its own user names (tsung1...), made by the run.
                   "jabber_register" -> [];
                   _ -> [{"(name=\"userid_max\" value=)\"[0-9]*\"", "\\1\"40\""},
                         {"(name=\"username\" value=)\"[^\"]*\"", "\\1\"user\""},
                         {"(name=\"passwd\" value=)\"[^\"]*\"", "\\1\"pass\""}]
               end,
    Node = case Xmpp of
               %% As the xmpp suite: the node's creator gets arrivals of its own.
               "jabber_node" -> [{"<user session=\"create_node\"[^>]*></user>", ""},
                                 {"probability='0'", "probability='20'"},
                                 {"probability=\"100\"", "probability=\"80\""}];
               _ -> []
           end,
    Server ++ [Users, {"(name=\"domain\" value=)\"[^\"]*\"", "\\1\"bs.test\""},
               {"(name=\"pubsub_service\" value=)\"[^\"]*\"", "\\1\"pubsub.bs.test\""},
               {"(name=\"muc_service\" value=)\"[^\"]*\"", "\\1\"conference.bs.test\""}]
        ++ Accounts ++ Node.
