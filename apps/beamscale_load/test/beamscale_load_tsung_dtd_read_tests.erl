%% Tsung 1.7's DTD walked once more: each attribute the reader's table marks `read'
%% (`beamscale_load_tsung_dom:status/2') is put, at one value and at another (or absent and
%% present), on its element in a small valid file; the reader (`beamscale_load_tsung:from_text/2',
%% what `beamscale load FILE' runs) must give two different scenarios: the value reached it.
-module(beamscale_load_tsung_dtd_read_tests).

-include_lib("eunit/include/eunit.hrl").

-import(beamscale_load_tsung_dtd_files,
        [tree/2, kind/1, session/2, doc/1, t/2, t/3, phase/1, users/0, http/1, http_req/0,
         session_attrs/1, csv/1, sessions/2, set_base/2, marked/1, set/3, render/1, line/1]).

read_attributes_test_() ->
    {timeout, 60, fun read_attributes/0}.

%% Batch clients read their hosts from the batch system's variables: set here, as in a job.
-define(ENV, [{"LSB_HOSTS", "h1 h2"}, {"SLURM_NODELIST", "h3"}]).

read_attributes() ->
    Dir = dir(),
    Saved = [{K, os:getenv(K)} || {K, _} <- ?ENV],
    [true = os:putenv(K, V) || {K, V} <- ?ENV],
    Read = [{E, A} || {E, A} <- beamscale_load_tsung_dtd_tests:attributes(),
                      beamscale_load_tsung_dom:status(E, A) =:= read],
    try
        %% The walk found the table's read attributes: most of the DTD's.
        ?assert(length(Read) > 200),
        Failed = [{E, A, Why} || {E, A} <- Read, Why <- [reaches(E, A, Dir)], Why =/= ok],
        ?assertEqual([], Failed)
    after
        [case V of false -> os:unsetenv(K); _ -> os:putenv(K, V) end || {K, V} <- Saved],
        ok = file:del_dir_r(Dir)
    end.

%% `ok' when the attribute's two values give two scenarios; else why not.
reaches(E, A, Dir) ->
    {Tree, V1, V0} = variant(E, A, Dir),
    One = one_value(E, A),
    V2 = case One of {_, Bad} -> Bad; none -> V0 end,
    case {One, run(Tree, A, V1, Dir), run(Tree, A, V2, Dir)} of
        %% One value read, the others refused at the element's line naming the attribute.
        {{_Why, _}, {ok, _}, {error, _, Line, Msg}} ->
            Name = atom_to_list(A),
            case string:find(Msg, Name) =/= nomatch andalso Line =:= line(Tree) of
                true -> ok;
                false -> {not_refused, Line, Msg}
            end;
        {{_, _}, R1, R2} -> {expected_one_value, R1, R2};
        {none, R1, R2} -> two_values(R1, R2, V1, V2)
    end.

two_values(R1, R2, V1, V2) ->
    case {R1, R2} of
        {{ok, S}, {ok, S}} -> {same_scenario, V1, V2};
        {{ok, _}, {ok, _}} -> ok;
        _ -> {R1, R2}
    end.

%% The attributes of which the reader takes one value and refuses the others at the element's
%% line (the second value is one of those): `{Reason, Value}'; the test checks the refusal.
one_value(oauth, method) -> {"HMAC-SHA1 only", "PLAINTEXT"};
one_value(pgsql, A) when A =:= formats; A =:= formats_results ->
    {"beamscale sends parameters and takes results as text", "binary"};
one_value(www_authenticate, qop) -> {"auth only", "auth-int"};
one_value(change_type, bidi) -> {"given on <session>", "true"};
one_value(dyn_variable, decode) -> {"HTML entities are not decoded", "html_entities"};
%% subst="false" with a placeholder is refused too; without one, nothing is substituted.
one_value(request, subst) -> {"the body is substituted as the rest", "all_except_body"};
one_value(_, _) -> none.

run(Tree, A, V, Dir) ->
    Text = render(set(Tree, A, V)),
    case beamscale_load_tsung:from_text(filename:join(Dir, "t.xml"), Text) of
        {ok, S, _Warnings} -> {ok, S};
        {error, {_, {_, Line, Msg}}} -> {error, V, Line, flat(Msg)};
        %% The scenario's check, after the translation.
        {error, Why} -> {error, V, 0, flat(io_lib:format("~0tp", [Why]))}
    end.

flat(Msg) -> lists:flatten(io_lib:format("~ts", [Msg])).

dir() ->
    Dir = filename:join(["/tmp", "beamscale_dtd_read_" ++ os:getpid()]),
    ok = filelib:ensure_path(Dir),
    [ok = file:write_file(filename:join(Dir, F), C)
     || {F, C} <- [{"a.txt", "a"}, {"b.txt", "bb"}, {"u.csv", "x;y\n"}]],
    Dir.

%% The file, its element under test, and the two values of the attribute.
variant(E, A, Dir) ->
    {Tree, Vs} = case special(E, A, Dir) of
                     none -> {tree(E, Dir), values(E, A, Dir)};
                     {T, V} -> {T, V}
                 end,
    {_, _, Attrs, _} = marked(Tree),
    case Vs of
        {V1, V2} -> {Tree, V1, V2};
        V2 -> {Tree, proplists:get_value(A, Attrs, absent), V2}
    end.

%% The other value of an attribute (the base file's value, or absent, being the first), or
%% both; most are numbers.
values(abort, type, _) -> "all";
values(add_cookie, _, _) -> "w";
values(arrivalphase, unit, _) -> "minute";
values(arrivalphase, wait_all_sessions_end, _) -> "true";
values(certificate, keypass, _) -> "w";
values(certificate, _, _) -> "b.txt";
values(change_type, host, _) -> "127.0.0.2";
values(change_type, port, _) -> "8002";
values(change_type, server_type, _) -> "ssl";
values(change_type, new_type, _) -> "ts_webdav";
values(change_type, _, _) -> "true";
values(client, scan_intf, _) -> "lo";
values(client, batch, _) -> "slurm";
values(client, type, _) -> "machine";
values(dyn_variable, decode, _) -> "html_entities";
values(dyn_variable, _, _) -> "(b)";
values(foreach, _, _) -> "w";
values(fs, cmd, _) -> "write";
values(fs, mode, _) -> "write";
values(fs, path, _) -> "/tmp/y";
values(fs, dest, _) -> "/tmp/z";
values(http, contents_from_file, _) -> "a.txt";
values(http, url, _) -> "/a";
values(http, version, _) -> "1.0";
values(http, method, _) -> "POST";
values(http, if_modified_since, _) -> "Mon, 1 Jan 2024 00:00:00 GMT";
values(http, _, _) -> "w";
values(http_header, encoding, _) -> "base64";
values(http_header, _, _) -> "w";
values(E, var, _) when E =:= 'if'; E =:= while; E =:= until; E =:= 'for' -> "w";
values(interaction, action, _) -> "receive";
values(interaction, id, _) -> "w";
values(ip, scan, _) -> "true";
values(ip, value, _) -> "127.0.0.2";
values(iprange, value, _) -> "127.0.0.1-3";
values(iprange, version, _) -> {also, "v6", [{value, "fd00::1-2"}]};
values(load, unit, _) -> "minute";
values(match, do, _) -> "abort";
values(match, 'when', _) -> "nomatch";
values(match, name, _) -> "w";
values(match, skip_headers, _) -> "http";
values(mqtt, clean_start, _) -> "false";
values(mqtt, will_retain, _) -> "true";
values(mqtt, retained, _) -> "true";
values(mqtt, topic, _) -> "u";
values(mqtt, will_topic, _) -> "u";
values(mqtt, will_msg, _) -> "w";
values(mqtt, qos, _) -> "1";
values(mqtt, will_qos, _) -> "1";
values(mqtt, type, _) -> "disconnect";
values(mysql, type, _) -> "close";
values(mysql, _, _) -> "w";
values(oauth, _, _) -> "w";
values(option, override, _) -> "true";
values(option, random, _) -> "true";
values(pgsql, type, _) -> "sync";
values(raw, ack, _) -> "no_ack";
values(raw, data, _) -> "y";
values(request, subst, _) -> "true";
values(server, host, _) -> "127.0.0.2";
values(server, type, _) -> "ssl";
values(session, bidi, _) -> "true";
values(session, name, _) -> "t";
values(session, type, _) -> "ts_webdav";
values(set_option, name, _) -> "retry_timeout";
values(setdynvars, sourcetype, _) -> {also, "random_string", [{length, "2"}]};
values(snmp, community, _) -> "w";
values(soap, action, _) -> "w";
values(thinktime, random, _) -> "true";
values(transaction, name, _) -> "w";
values(tsung, dumptraffic, _) -> "true";
values(user, unit, _) -> "millisecond";
values(users, unit, _) -> "minute";
values(var, name, _) -> "w";
values(websocket, type, _) -> "close";
values(websocket, path, _) -> "/a";
values(websocket, _, _) -> "w";
values(www_authenticate, type, _) -> "digest";
values(www_authenticate, _, _) -> "w";
values(jabber, type, _) -> "close";
values(jabber, ack, _) -> "no_ack";
values(ldap, type, _) -> "unbind";
values(ldap, _, _) -> "w";
values(amqp, type, _) -> "waitForMessages";
values(_, _, _) -> "2".

%% The attributes read in one context of their element: the file and both values.
special(pgsql, query, _) ->
    {session("ts_pgsql", [{request, [], [t(pgsql, [{type, "sql"}, {query, "SELECT 1"}], [])]}]),
     "SELECT 2"};
special(E, A, Dir) when E =:= jabber; E =:= ldap; E =:= amqp; E =:= mqtt; E =:= pgsql;
                        E =:= mysql; E =:= fs; E =:= websocket; E =:= raw ->
    case kind_context(E, A, Dir) of
        none -> none;
        {Attrs, Vs} ->
            {Type, _, Kids} = kind(E),
            {session("ts_" ++ Type, [{request, [], [t(E, Attrs, Kids)]}]), Vs}
    end;
%% Without its type, ts_jabber's option is not one of its own: a warning, not a setting.
special(option, type, _) ->
    Jabber = {request, [], [{jabber, [{type, "connect"}, {ack, "local"}], []}]},
    {doc(#{options => [t(option, [{type, "ts_jabber"}, {name, "domain"}, {value, "d"}])],
           session => {session, session_attrs("ts_jabber"), [Jabber]}}), absent};
special(option, id, Dir) ->
    {doc(#{options => [t(option, [{name, "file_server"}, {id, "f"}, {value, csv(Dir)}])]}), "g"};
special(setdynvars, A, Dir) when A =:= delimiter; A =:= fileid; A =:= order ->
    Files = [{option, [{name, "file_server"}, {id, I}, {value, csv(Dir)}], []} || I <- ["f", "g"]],
    Set = t(setdynvars, [{sourcetype, "file"}, {fileid, "f"}], [{var, [{name, "v"}], []}]),
    {doc(#{options => Files, session => {session, session_attrs("ts_http"), [Set, http_req()]}}),
     case A of delimiter -> ","; fileid -> "g"; order -> "random" end};
special(setdynvars, A, _) when A =/= sourcetype, A =/= start, A =/= 'end' ->
    {Attrs, V} = case A of
                     callback -> {[{sourcetype, "erlang"}, {callback, "lists:sort"}], "lists:max"};
                     code -> {[{sourcetype, "eval"}, {code, "fun(_) -> 1 end."}],
                              "fun(_) -> 2 end."};
                     value -> {[{sourcetype, "value"}, {value, "a"}], "b"};
                     length -> {[{sourcetype, "random_string"}, {length, "1"}], "2"};
                     _ -> {[{sourcetype, "jsonpath"}, {from, "v"}, {jsonpath, "$.a"}],
                           case A of from -> "w"; jsonpath -> "$.b" end}
                 end,
    {session("ts_http", [t(setdynvars, Attrs, [{var, [{name, "v"}], []}]), http_req()]), V};
%% A body with a placeholder is left as written by all_except_body.
special(request, subst, _) ->
    {session("ts_http", [t(request, [{subst, "true"}],
                           [http([{url, "/%%_v%%"}, {method, "POST"}, {contents, "%%_v%%"}])])]),
     "all_except_body"};
special(session, probability, _) ->
    %% Within the 1.0e-6 by which the probabilities may miss 100.
    {tree(session, none), "99.9999999"};
special(E, A, _) when E =:= session_setup; E =:= user ->
    Two = [{session, [{name, N}, {probability, P}, {type, "ts_http"}], [http_req()]}
           || {N, P} <- [{"s", "50"}, {"t", "50"}]],
    Load = case E of
               user -> {load, [], [t(user, [{session, "s"}, {start_time, "1"}])]};
               session_setup ->
                   {load, [], [phase([users(), t(session_setup, [{name, "s"},
                                                                 {probability, "100"}])])]}
           end,
    Doc = doc(#{load => Load}),
    {setelement(3, Doc, sessions(Doc, Two)),
     case A of
         _ when A =:= name; A =:= session -> "t";
         probability -> "99.9999999";
         _ -> values(E, A, none)
     end};
special(www_authenticate, type, _) ->
    {set_base(tree(www_authenticate, none), [{userid, "u"}, {passwd, "p"}]),
     {also, "digest", [{realm, "r"}, {nonce, "n"}]}};
%% `store' and `restore' keep the connections of the session's type and the new one; the new
%% type's is closed at the end of the session (no request after: both types are closed).
special(change_type, A, _) when A =:= new_type; A =:= store; A =:= restore ->
    Change = t(change_type, [{new_type, "ts_raw"}, {host, "127.0.0.1"}, {port, "8001"},
                             {server_type, "tcp"}]),
    Raw = {request, [], [{raw, [{data, "x"}, {ack, "local"}], []}]},
    {session("ts_http", [http_req(), Change] ++ [Raw || A =/= new_type]),
     case A of new_type -> "ts_http"; _ -> "true" end};
special(option, name, _) ->
    {doc(#{options => [t(option, [{name, "connect_timeout"}, {value, "1"}])]}), "idle_timeout"};
special(option, A, _) when A =:= min; A =:= max ->
    {set_base(tree(option, none), [{name, "thinktime"}, {min, "1"}, {max, "3"}]),
     case A of min -> "0"; max -> "4" end};
special(E, A, Dir) ->
    case base(E, A, Dir) of
        none -> none;
        Attrs -> {set_base(tree(E, Dir), Attrs), values(E, A, Dir)}
    end.

%% A request's attributes in the context that reads them.
kind_context(amqp, vhost, _) -> {[{type, "connection.open"}], "/v"};
kind_context(amqp, timeout, _) -> {[{type, "waitForMessages"}], "2"};
kind_context(amqp, A, _) when A =:= ack; A =:= queue ->
    {[{type, "basic.consume"}, {queue, "q"}], "true"};
kind_context(amqp, A, _) when A =:= prefetch_size; A =:= prefetch_count ->
    {[{type, "basic.qos"}], "2"};
kind_context(amqp, A, _) when A =/= type ->
    {[{type, "basic.publish"}, {exchange, "x"}, {routing_key, "r"}],
     case A of persistent -> "true"; _ -> "2" end};
kind_context(jabber, A, _) when A =:= destination; A =:= size ->
    {[{type, "chat"}, {ack, "no_ack"}, {size, "10"}],
     case A of destination -> "unique"; size -> "20" end};
kind_context(jabber, A, _) when A =:= nick; A =:= room ->
    {[{type, "muc:join"}, {ack, "local"}, {room, "r"}, {nick, "n"}], "w"};
kind_context(jabber, show, _) -> {[{type, "presence:broadcast"}, {ack, "no_ack"}], "away"};
kind_context(jabber, A, _) when A =:= data ->
    {[{type, "raw"}, {ack, "no_ack"}, {data, "x"}], "y"};
kind_context(jabber, A, _) when A =:= node_type; A =:= node ->
    {[{type, "pubsub:create"}, {ack, "local"}, {node, "n"}], "w"};
kind_context(ldap, A, _) when A =:= base; A =:= filter; A =:= scope ->
    {[{type, "search"}, {base, "dc=a"}, {filter, "(a=b)"}],
     case A of scope -> "singleLevel"; filter -> "(c=d)"; base -> "dc=b" end};
kind_context(ldap, dn, _) -> {[{type, "delete"}, {dn, "dc=a"}], "dc=b"};
kind_context(ldap, A, Dir) when A =:= cacertfile; A =:= certfile; A =:= keyfile ->
    {[{type, "start_tls"}], filename:join(Dir, "a.txt")};
kind_context(mqtt, A, _) when A =:= qos; A =:= retained; A =:= topic ->
    {[{type, "publish"}, {topic, "t"}], values(mqtt, A, none)};
kind_context(mqtt, timeout, _) -> {[{type, "waitForMessages"}], "2"};
kind_context(mqtt, A, _) when A =:= will_qos; A =:= will_msg; A =:= will_retain ->
    {[{type, "connect"}, {will_topic, "t"}], values(mqtt, A, none)};
kind_context(mysql, A, _) when A =/= type ->
    {[{type, "authenticate"}, {username, "u"}], "w"};
kind_context(pgsql, A, _) when A =:= database; A =:= username ->
    {[{type, "connect"}, {database, "d"}, {username, "u"}], "w"};
kind_context(pgsql, password, _) -> {[{type, "authenticate"}, {password, "p"}], "w"};
kind_context(pgsql, contents_from_file, _) ->
    {[{type, "copy"}, {contents_from_file, "a.txt"}], "b.txt"};
kind_context(pgsql, A, _) when A =:= max_rows; A =:= name_portal ->
    {[{type, "execute"}], "2"};
kind_context(pgsql, A, _) when A =:= name_prepared ->
    {[{type, "parse"}, {query, "SELECT 1"}], "w"};
kind_context(pgsql, A, _) when A =:= parameters; A =:= formats; A =:= formats_results ->
    {[{type, "bind"}], case A of parameters -> "1"; _ -> {absent, "text"} end};
kind_context(pgsql, query, _) -> {[{type, "sql"}], "SELECT 2"};
kind_context(fs, dest, _) -> {[{cmd, "copy"}, {path, "/tmp/x"}, {dest, "/tmp/y"}], "/tmp/z"};
kind_context(fs, mode, _) -> {[{cmd, "open"}, {path, "/tmp/x"}], "write"};
kind_context(fs, size, _) -> {[{cmd, "write"}, {path, "/tmp/x"}], "2"};
kind_context(websocket, A, _) when A =:= ack; A =:= frame ->
    {[{type, "message"}], case A of ack -> "no_ack"; frame -> "binary" end};
kind_context(raw, datasize, _) -> {[{datasize, "1"}, {ack, "local"}], "2"};
kind_context(_, _, _) -> none.

%% The element's base attributes for one attribute, or `none' (those of `tree/2').
base(add_cookie, _, _) -> [{key, "k"}, {value, "v"}];
base(change_type, _, _) ->
    [{new_type, "ts_http"}, {host, "127.0.0.1"}, {port, "8001"}, {server_type, "tcp"}];
base(certificate, _, _) -> [{certfile, "a.txt"}];
base(client, A, _) when A =:= weight; A =:= cpu -> [{host, "h1"}];
base(client, A, _) when A =:= batch; A =:= type; A =:= scan_intf ->
    [{host, "h9"}, {type, "batch"}, {batch, "lsf"}];
base(dyn_variable, A, _) when A =:= header; A =:= jsonpath; A =:= regexp; A =:= xpath;
                              A =:= pgsql_expr ->
    [{name, "v"}, {A, "(a)"}];
base('for', _, _) -> [{var, "i"}, {from, "1"}, {to, "3"}];
base(foreach, _, _) -> [{name, "x"}, {in, "l"}];
base(http_header, _, _) -> [{name, "n"}, {value, "v"}];
base(E, A, _) when (E =:= 'if' orelse E =:= while orelse E =:= until) andalso
                  (A =:= neq orelse A =:= gt orelse A =:= gte orelse A =:= lt orelse A =:= lte) ->
    [{var, "v"}, {A, "1"}];
base(E, _, _) when E =:= 'if'; E =:= while; E =:= until -> [{var, "v"}, {eq, "1"}];
base(interaction, _, _) -> [{action, "send"}, {id, "i"}];
base(load, unit, _) -> [{duration, "1"}];
base(match, _, _) -> [];
base(oauth, _, _) -> [{consumer_key, "k"}, {consumer_secret, "s"}];
base(repeat, _, _) -> [{name, "r"}];
base(session, weight, _) -> [{name, "s"}, {weight, "1"}, {type, "ts_http"}];
base(set_option, _, _) -> [{name, "connect_timeout"}, {value, "1"}];
base(soap, _, _) -> [{action, "a"}];
base(thinktime, A, _) when A =:= min; A =:= max -> [{min, "1"}, {max, "3"}];
base(users, interarrival, _) -> [{interarrival, "1"}, {unit, "second"}];
base(www_authenticate, A, _) when A =:= userid; A =:= passwd; A =:= type ->
    [{userid, "u"}, {passwd, "p"}];
base(www_authenticate, _, _) ->
    [{userid, "u"}, {passwd, "p"}, {type, "digest"}, {realm, "r"}, {nonce, "n"}];
base(_, _, _) -> none.
