%% The small Tsung files of `beamscale_load_tsung_dtd_read_tests': a plain HTTP test in which
%% one element, the one under test, stands where Tsung's DTD puts it, with what its reader needs.
%% A node is `{Name, Attributes, Children}', children a list or a text; the element under test
%% is `{'$t', Name, Attributes, Children}' until `set/3' gives it its attribute.
-module(beamscale_load_tsung_dtd_files).

-export([tree/2, kind/1, session/2, doc/1, t/2, t/3, phase/1, users/0, http/1, http_req/0,
         session_attrs/1, csv/1, sessions/2, set_base/2, marked/1, set/3, render/1, line/1]).

%% A comment on the line before the element under test.
-define(MARK, "<!-- under test -->").

csv(Dir) -> filename:join(Dir, "u.csv").



%% The tree with its `<sessions>' children replaced.
sessions({tsung, _, Kids}, Sessions) ->
    [case K of {sessions, _, _} -> {sessions, [], Sessions}; _ -> K end || K <- Kids].

set_base({'$t', N, _, Kids}, Attrs) -> {'$t', N, Attrs, Kids};
set_base({N, Attrs, Kids}, Base) when is_list(Kids) ->
    {N, Attrs, [case is_tuple(K) of true -> set_base(K, Base); false -> K end || K <- Kids]};
set_base(Node, _) -> Node.

%% A file in which the element `E' stands, marked.
tree(tsung, _) -> doc(#{root => marked});
tree(E, _) when E =:= client; E =:= ip; E =:= iprange -> doc(#{clients => [client(E)]});
tree(server, _) ->
    doc(#{servers => [t(server, [{host, "127.0.0.1"}, {port, "8000"}, {type, "tcp"}])]});
tree(monitor, _) -> doc(#{monitoring => [t(monitor, [{host, "h"}])]});
tree(E, _) when E =:= snmp; E =:= munin ->
    doc(#{monitoring => [{monitor, [{host, "h"}, {type, atom_to_list(E)}], [t(E, [])]}]});
tree(load, _) -> doc(#{load => t(load, [], [phase([users()])])});
tree(arrivalphase, _) ->
    doc(#{load => {load, [], [t(arrivalphase, [{phase, "1"}, {duration, "1"}, {unit, "second"}],
                                [users()])]}});
tree(users, _) ->
    doc(#{load => {load, [], [phase([t(users, [{arrivalrate, "1"}, {unit, "second"}])])]}});
tree(session_setup, _) ->
    doc(#{load => {load, [], [phase([users(), t(session_setup, [{name, "s"},
                                                                {probability, "100"}])])]}});
tree(user, _) -> doc(#{load => {load, [], [t(user, [{session, "s"}, {start_time, "1"}])]}});
%% A bare think time takes the option's; one of its own, the option's when it overrides.
tree(option, _) ->
    doc(#{options => [t(option, [{name, "thinktime"}, {value, "1"}])],
          session => {session, session_attrs("ts_http"),
                      [http_req(), {thinktime, [], []}, {thinktime, [{value, "5"}], []}]}});
tree(user_agent, _) ->
    doc(#{options => [{option, [{type, "ts_http"}, {name, "user_agent"}],
                       [t(user_agent, [{probability, "100"}], "UA")]}]});
tree(session, _) -> doc(#{session => t(session, session_attrs("ts_http"), [http_req()])});
tree(E, Dir) ->
    case kind(E) of
        {Type, Attrs, Kids} ->
            session("ts_" ++ Type, [{request, [], [t(E, Attrs, Kids)]}]);
        none -> step(E, Dir)
    end.

%% The steps of a session and what is inside them.
step(request, _) -> session("ts_http", [t(request, [], [http(url())])]);
step(E, _) when E =:= match; E =:= dyn_variable ->
    session("ts_http", [{request, [], [t(E, [{name, "v"}, {re, "(x)"}], ""), http(url())]}]);
step(E, _) when E =:= oauth; E =:= www_authenticate; E =:= soap; E =:= http_header;
                E =:= add_cookie ->
    session("ts_http", [{request, [], [{http, url(), [t(E, [], [])]}]}]);
step(thinktime, _) -> session("ts_http", [http_req(), t(thinktime, [{value, "1"}])]);
step(transaction, _) -> session("ts_http", [t(transaction, [{name, "t"}], [http_req()])]);
step(repeat, _) ->
    session("ts_http", [t(repeat, [{name, "r"}], [http_req(), {while, [{var, "v"}, {eq, "1"}],
                                                                 []}])]);
step(E, _) when E =:= 'for'; E =:= foreach; E =:= 'if' ->
    session("ts_http", [t(E, [], [http_req()])]);
step(E, _) when E =:= while; E =:= until ->
    session("ts_http", [{repeat, [{name, "r"}], [http_req(), t(E, [{var, "v"}, {eq, "1"}])]}]);
step(setdynvars, _) ->
    session("ts_http", [t(setdynvars, [{sourcetype, "random_number"}, {start, "1"}, {'end', "9"}],
                          [{var, [{name, "v"}], []}]), http_req()]);
step(var, _) ->
    session("ts_http", [{setdynvars, [{sourcetype, "random_number"}, {start, "1"}, {'end', "9"}],
                         [t(var, [{name, "v"}])]}, http_req()]);
step(E, _) when E =:= abort; E =:= interaction; E =:= change_type; E =:= set_option ->
    session("ts_http", [http_req(), t(E, [], []), http_req()]);
step(certificate, _) ->
    session("ts_http", [{set_option, [{name, "certificate"}], [t(certificate, [])]}, http_req()]).

%% A request kind's element: its session type, base attributes and children.
kind(http) -> {"http", url(), []};
kind(jabber) -> {"jabber", [{type, "connect"}, {ack, "local"}], []};
kind(raw) -> {"raw", [{data, "x"}, {ack, "local"}], []};
kind(pgsql) -> {"pgsql", [{type, "sql"}], "SELECT 1"};
kind(mysql) -> {"mysql", [{type, "sql"}], "SELECT 1"};
kind(ldap) -> {"ldap", [{type, "bind"}, {user, "u"}, {password, "p"}], []};
kind(fs) -> {"fs", [{cmd, "read"}, {path, "/tmp/x"}], []};
kind(websocket) -> {"websocket", [{type, "connect"}, {path, "/"}], []};
kind(amqp) -> {"amqp", [{type, "connection.open"}], []};
kind(mqtt) -> {"mqtt", [{type, "connect"}], []};
kind(_) -> none.

client(client) -> t(client, [{host, "localhost"}, {use_controller_vm, "true"}]);
client(E) -> {client, [{host, "localhost"}], [t(E, [{value, "127.0.0.1"}])]}.

plain_client() -> {client, [{host, "localhost"}, {use_controller_vm, "true"}], []}.

phase(Kids) -> {arrivalphase, [{phase, "1"}, {duration, "1"}, {unit, "second"}], Kids}.
users() -> {users, [{arrivalrate, "1"}, {unit, "second"}], []}.
url() -> [{url, "/"}].
http(Attrs) -> {http, Attrs, []}.
http_req() -> {request, [], [http(url())]}.
session_attrs(Type) -> [{name, "s"}, {probability, "100"}, {type, Type}].
session(Type, Body) -> doc(#{session => {session, session_attrs(Type), Body}}).

t(Name, Attrs) -> t(Name, Attrs, []).
t(Name, Attrs, Kids) -> {'$t', Name, Attrs, Kids}.

%% The whole file, the parts not given as in a plain HTTP test.
doc(Parts) ->
    P = maps:merge(#{root => plain, clients => [plain_client()], servers => [server()],
                     monitoring => [], load => {load, [], [phase([users()])]}, options => [],
                     session => {session, session_attrs("ts_http"), [http_req()]}}, Parts),
    Root = case maps:get(root, P) of
               marked -> t(tsung, []);
               plain -> {tsung, [], []}
           end,
    Kids = [{clients, [], maps:get(clients, P)}, {servers, [], maps:get(servers, P)}]
        ++ [{monitoring, [], M} || M <- [maps:get(monitoring, P)], M =/= []]
        ++ [maps:get(load, P)]
        ++ [{options, [], O} || O <- [maps:get(options, P)], O =/= []]
        ++ [{sessions, [], [maps:get(session, P)]}],
    setelement(tuple_size(Root), Root, Kids).

server() -> {server, [{host, "127.0.0.1"}, {port, "8000"}, {type, "tcp"}], []}.

%% ---- marking and rendering ----

marked({'$t', _, _, _} = T) -> T;
marked({_, _, Kids}) when is_list(Kids) ->
    hd([M || K <- Kids, is_tuple(K), M <- [marked(K)], M =/= none] ++ [none]);
marked(_) -> none.

set({'$t', N, Attrs, Kids}, A, {also, V, More}) ->
    Rest = [P || {K, _} = P <- Attrs, K =/= A, not lists:keymember(K, 1, More)],
    {mark, N, More ++ [{A, V}] ++ Rest, Kids};
set({'$t', N, Attrs, Kids}, A, V) ->
    {mark, N, [{A, V} || V =/= absent] ++ lists:keydelete(A, 1, Attrs), Kids};
set({N, Attrs, Kids}, A, V) when is_list(Kids) ->
    {N, Attrs, [case is_tuple(K) of true -> set(K, A, V); false -> K end || K <- Kids]};
set(Node, _, _) -> Node.

render(Tree) -> lists:flatten(["<?xml version=\"1.0\"?>\n", xml(Tree)]).

xml({mark, N, Attrs, Kids}) -> [?MARK, "\n", xml({N, Attrs, Kids})];
xml({N, Attrs, Kids}) ->
    Open = ["<", atom_to_list(N), [[" ", atom_to_list(K), "=\"", V, "\""] || {K, V} <- Attrs]],
    case Kids of
        [] -> [Open, "/>\n"];
        [C | _] when is_integer(C) -> [Open, ">", Kids, "</", atom_to_list(N), ">\n"];
        _ -> [Open, ">\n", [xml(K) || K <- Kids], "</", atom_to_list(N), ">\n"]
    end.

%% The line of the element under test in the rendered file: the one after the comment.
line(Tree) ->
    Lines = string:split(render(set(Tree, '$none', absent)), "\n", all),
    1 + length(lists:takewhile(fun(L) -> L =/= ?MARK end, Lines)) + 1.
